// Package core holds the vocabulary every other package of retention speaks: the error
// types whose kind tells a supervisor whether a second attempt could succeed, and (in its
// subpackages) the seams and primitives the runtime is assembled from.
//
// Package core and its subpackages import only the standard library, so a service that
// only wants to return a retention-aware error, or to run a poll loop, widens its build
// by nothing.
//
// There is no unit type: a Go function with no result returns nothing, or only an error,
// and a generic helper that needs a placeholder result uses struct{}.
package core
