// Package trees computes closure rows from parent links. A tree kept as (id, parent)
// pairs tells "what is below this node" only by walking; its closure (one row per
// ancestor and descendant pair, with their distance) answers it at once. Package passes
// uses it to order nested child tables deepest first.
package trees

import "fmt"

// Node is one member of a forest: an ID and, unless it is a root, its parent's ID.
type Node[ID comparable] struct {
	ID     ID
	Parent *ID
}

// CycleError says that following parent links from Node came back to a node already
// visited on that walk.
type CycleError[ID comparable] struct {
	Node ID
}

func (e *CycleError[ID]) Error() string {
	return fmt.Sprintf("trees: the parent chain of node %v runs into a cycle", e.Node)
}

// DuplicateError says that the same ID was given twice, so its parent is ambiguous.
type DuplicateError[ID comparable] struct {
	Node ID
}

func (e *DuplicateError[ID]) Error() string {
	return fmt.Sprintf("trees: node %v is listed more than once", e.Node)
}

// Compute returns, for every node in the order given, a self row at depth 0 followed by
// one row per ancestor its parent chain reaches, nearest first, at the number of edges
// between them. A parent that is not among the nodes ends the walk, so a partial set
// yields what it can. A cycle fails with a *CycleError naming the node whose walk ran
// into it; an ID given twice fails with a *DuplicateError.
func Compute[ID comparable, Row any](nodes []Node[ID], row func(ancestor, descendant ID, depth int) Row) ([]Row, error) {
	parents := make(map[ID]*ID, len(nodes))
	for _, n := range nodes {
		if _, dup := parents[n.ID]; dup {
			return nil, &DuplicateError[ID]{Node: n.ID}
		}
		parents[n.ID] = n.Parent
	}
	rows := make([]Row, 0, len(nodes))
	for _, n := range nodes {
		rows = append(rows, row(n.ID, n.ID, 0))
		seen := map[ID]bool{n.ID: true}
		depth := 1
		for p := n.Parent; p != nil; depth++ {
			next, known := parents[*p]
			if !known {
				break
			}
			if seen[*p] {
				return nil, &CycleError[ID]{Node: n.ID}
			}
			seen[*p] = true
			rows = append(rows, row(*p, n.ID, depth))
			p = next
		}
	}
	return rows, nil
}
