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

// dup2 is dup3 without flags: linux/arm64 has no dup2 system call.
func dup2(oldfd, newfd int) error { return syscall.Dup3(oldfd, newfd, 0) }

func closeFD(fd int) { _ = syscall.Close(fd) }
