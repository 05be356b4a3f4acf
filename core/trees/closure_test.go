package trees_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/retentionkit/retention/core/trees"
)

type row struct {
	Ancestor, Descendant string
	Depth                int
}

func mkRow(a, d string, depth int) row { return row{a, d, depth} }

func ptr[T any](v T) *T { return &v }

func TestCompute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes []trees.Node[string]
		want  []row
	}{
		{"empty", nil, []row{}},
		{"a root has only its self row", []trees.Node[string]{{ID: "r"}}, []row{{"r", "r", 0}}},
		{"chain", []trees.Node[string]{{ID: "r"}, {ID: "c", Parent: ptr("r")}, {ID: "g", Parent: ptr("c")}}, []row{
			{"r", "r", 0},
			{"c", "c", 0}, {"r", "c", 1},
			{"g", "g", 0}, {"c", "g", 1}, {"r", "g", 2},
		}},
		{"siblings", []trees.Node[string]{{ID: "a", Parent: ptr("r")}, {ID: "b", Parent: ptr("r")}, {ID: "r"}}, []row{
			{"a", "a", 0}, {"r", "a", 1},
			{"b", "b", 0}, {"r", "b", 1},
			{"r", "r", 0},
		}},
		{"a parent outside the set ends the walk", []trees.Node[string]{{ID: "c", Parent: ptr("missing")}, {ID: "g", Parent: ptr("c")}}, []row{
			{"c", "c", 0},
			{"g", "g", 0}, {"c", "g", 1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := trees.Compute(tc.nodes, mkRow)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("rows = %v\nwant   %v", got, tc.want)
			}
		})
	}
}

func TestComputeFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		nodes    []trees.Node[string]
		wantNode string
		cycle    bool
	}{
		{"self parent", []trees.Node[string]{{ID: "a", Parent: ptr("a")}}, "a", true},
		{"two-node cycle", []trees.Node[string]{{ID: "a", Parent: ptr("b")}, {ID: "b", Parent: ptr("a")}}, "a", true},
		{"a chain that runs into a cycle names its own node", []trees.Node[string]{{ID: "x", Parent: ptr("b")}, {ID: "b", Parent: ptr("c")}, {ID: "c", Parent: ptr("b")}}, "x", true},
		{"duplicate id", []trees.Node[string]{{ID: "a"}, {ID: "a"}}, "a", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trees.Compute(tc.nodes, mkRow)
			var cyc *trees.CycleError[string]
			var dup *trees.DuplicateError[string]
			switch {
			case tc.cycle && errors.As(err, &cyc):
				if cyc.Node != tc.wantNode {
					t.Fatalf("cycle names %q, want %q", cyc.Node, tc.wantNode)
				}
			case !tc.cycle && errors.As(err, &dup):
				if dup.Node != tc.wantNode {
					t.Fatalf("duplicate names %q, want %q", dup.Node, tc.wantNode)
				}
			default:
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// bruteForce computes the closure by following parents with a step bound: a walk longer
// than the number of nodes must have looped.
func bruteForce(nodes []trees.Node[int]) ([]row, bool) {
	parent := map[int]*int{}
	for _, n := range nodes {
		parent[n.ID] = n.Parent
	}
	var rows []row
	for _, n := range nodes {
		rows = append(rows, row{fmt.Sprint(n.ID), fmt.Sprint(n.ID), 0})
		cur, depth := n.Parent, 1
		for cur != nil {
			next, ok := parent[*cur]
			if !ok {
				break
			}
			if depth > len(nodes) {
				return nil, true
			}
			rows = append(rows, row{fmt.Sprint(*cur), fmt.Sprint(n.ID), depth})
			cur, depth = next, depth+1
		}
	}
	return rows, false
}

// randomForest builds up to n nodes with unique ids; parents point anywhere in a range a
// little wider than the ids (so some are missing), which makes cycles likely as well.
func randomForest(rng *rand.Rand, n int) []trees.Node[int] {
	ids := rng.Perm(n)
	nodes := make([]trees.Node[int], 0, n)
	for _, id := range ids {
		node := trees.Node[int]{ID: id}
		if rng.IntN(4) > 0 {
			node.Parent = ptr(rng.IntN(n + n/4 + 1))
		}
		nodes = append(nodes, node)
	}
	return nodes
}

func checkAgainstBruteForce(t *testing.T, nodes []trees.Node[int]) {
	want, cyclic := bruteForce(nodes)
	got, err := trees.Compute(nodes, func(a, d, depth int) row { return row{fmt.Sprint(a), fmt.Sprint(d), depth} })
	if cyclic {
		var cyc *trees.CycleError[int]
		if !errors.As(err, &cyc) {
			t.Fatalf("cyclic input %v: err = %v", nodes, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("acyclic input %v: %v", nodes, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("input %v:\n got  %v\n want %v", nodes, got, want)
	}
}

func TestComputeMatchesBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	cycles := 0
	for range 2000 {
		nodes := randomForest(rng, 1+rng.IntN(30))
		if _, cyclic := bruteForce(nodes); cyclic {
			cycles++
		}
		checkAgainstBruteForce(t, nodes)
	}
	if cycles == 0 || cycles == 2000 {
		t.Fatalf("%d of 2000 forests had cycles: the generator does not mix both", cycles)
	}
}

func FuzzCompute(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2})
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Byte i is node i's parent; 255 means a root.
		var nodes []trees.Node[int]
		for i, b := range data {
			n := trees.Node[int]{ID: i}
			if b != 255 {
				n.Parent = ptr(int(b))
			}
			nodes = append(nodes, n)
		}
		checkAgainstBruteForce(t, nodes)
	})
}
