package node

// closers undo what a start has done so far, last first, in one place: a step that
// succeeds pushes its undo, and a failing step further on returns without repeating
// the earlier steps' cleanups by hand (which is how one error path forgot one).
type closers []func()

// push adds f to the undo of the steps done so far.
func (c *closers) push(f func()) { *c = append(*c, f) }

// close runs every undo, the last pushed first, once: a second call does nothing.
func (c *closers) close() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
	*c = nil
}
