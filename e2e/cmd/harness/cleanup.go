package main

import (
	"fmt"
	"io"
)

func cleanup(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "harness cleanup: not wired yet")
	return 2
}
