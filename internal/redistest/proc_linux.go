package redistest

import "syscall"

// sysProcAttr kills a node when the test process dies without cleaning up
// (a panic, a timeout), so no redis-server outlives the test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
