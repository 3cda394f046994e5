package hooks

import (
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// pidWatch tells when processes exit, through pidfds, until closed.
type pidWatch struct {
	once sync.Once
	r, w *os.File // closing w wakes every watcher
	err  error
}

func (p *pidWatch) init() error {
	p.once.Do(func() { p.r, p.w, p.err = os.Pipe() })
	return p.err
}

// watch calls exited once pid exits; not when the watch is closed first.
// It fails when pid is not a process (gone already, or never one).
func (p *pidWatch) watch(pid int, exited func()) error {
	if pid <= 1 {
		return errors.New("not a process opx watches")
	}
	if err := p.init(); err != nil {
		return err
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return err
	}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(p.r.Fd()), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || fds[1].Revents != 0 {
				return // closed
			}
			if fds[0].Revents != 0 {
				exited()
				return
			}
		}
	}()
	return nil
}

// close ends every watch.
func (p *pidWatch) close() {
	if p.init() == nil {
		p.w.Close()
	}
}
