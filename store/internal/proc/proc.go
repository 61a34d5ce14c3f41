// Package proc tells whether a process on this host is still the one that
// took a lease.
//
// A PID alone is not an identity: PIDs are reused. Identity combines the
// kernel boot ID with the process start time (field 22 of /proc/PID/stat,
// in clock ticks since boot), so a process that died and a stranger that
// later got its PID, or the same PID after a reboot, never match.
package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrNoProcess reports that no such process exists (or it is a zombie).
var ErrNoProcess = errors.New("no such process")

// Identity returns "<boot id>:<start ticks>" for a live process. It returns
// ErrNoProcess when the process does not exist or has exited (a zombie),
// and another error when /proc cannot be read.
func Identity(pid int) (string, error) {
	if pid <= 0 {
		return "", ErrNoProcess
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "", ErrNoProcess
	}
	if err != nil {
		return "", err
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself; the fields after the last ')' are plain.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", errors.New("parse /proc stat: no command field")
	}
	fields := strings.Fields(string(stat[i+1:]))
	// fields[0] is field 3 (state); start time is field 22.
	if len(fields) < 20 {
		return "", errors.New("parse /proc stat: too few fields")
	}
	if s := fields[0]; s == "Z" || s == "X" || s == "x" {
		return "", ErrNoProcess
	}
	return bootID() + ":" + fields[19], nil
}

// Alive reports whether the process pid is alive and, when identity is not
// empty, is the very process whose Identity it was. When /proc cannot be
// read it falls back to signal 0, and when even that cannot tell (EPERM) it
// says alive: a lease must never be stolen on a guess.
func Alive(pid int, identity string) bool {
	cur, err := Identity(pid)
	switch {
	case errors.Is(err, ErrNoProcess):
		return false
	case err != nil:
		return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	case identity == "":
		return true
	default:
		return cur == identity
	}
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown-boot"
	}
	return strings.TrimSpace(string(b))
}
