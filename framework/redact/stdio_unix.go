//go:build unix && !linux

package redact

import "syscall"

// dup duplicates fd, close-on-exec: children get the pipe, not the real output.
func dup(fd int) (int, error) {
	nfd, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	return nfd, err
}

func dup2(oldfd, newfd int) error { return syscall.Dup2(oldfd, newfd) }

func closeFD(fd int) { _ = syscall.Close(fd) }
