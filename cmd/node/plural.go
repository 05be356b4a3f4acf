package main

import "fmt"

// counted is n followed by its noun, singular for exactly one: "1 pass", "2 passes",
// "0 passes". Every count the CLI prints in words goes through it, so none reads
// "1 passes".
func counted(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
