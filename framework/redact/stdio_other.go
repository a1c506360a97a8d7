//go:build !unix

package redact

import "errors"

var errNoRedirect = errors.New("redact: redirecting stdout and stderr needs a unix system")

func dup(int) (int, error) { return -1, errNoRedirect }

func dup2(int, int) error { return errNoRedirect }

func closeFD(int) {}
