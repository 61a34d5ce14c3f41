// Package proc tells whether a process on this host is still the one that
// took a lease.
//
// A PID alone is not an identity: PIDs are reused. Identity combines the
// kernel boot ID with the process start time (field 22 of /proc/PID/stat,
// in clock ticks since boot), so a process that died and a stranger that
// later got its PID, or the same PID after a reboot, never match. It also
// names the PID namespace the PID belongs to: a process in another one (a
// container sharing the host's name and the store's file) has a PID that
// means nothing here, and is never judged dead by looking it up.
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

// Identity returns "<boot id>:<start ticks>:<pid namespace>" for a live
// process of this process's PID namespace. It returns
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
	return bootID() + ":" + fields[19] + ":" + pidNS(), nil
}

// Alive reports whether the process pid is alive and, when identity is not
// empty, is the very process whose Identity it was. When /proc cannot be
// read it falls back to signal 0, and when even that cannot tell (EPERM) it
// says alive: a lease must never be stolen on a guess. So does an identity
// taken in another PID namespace, whose PID cannot be looked up here. An
// identity recorded before namespaces were named ("<boot>:<start>") is
// compared without one.
func Alive(pid int, identity string) bool {
	if ns := namespaceOf(identity); ns != "" && ns != pidNS() {
		return true
	}
	cur, err := Identity(pid)
	switch {
	case errors.Is(err, ErrNoProcess):
		return false
	case err != nil:
		return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	case identity == "":
		return true
	case namespaceOf(identity) == "":
		return strings.TrimSuffix(cur, ":"+pidNS()) == identity
	default:
		return cur == identity
	}
}

// namespaceOf is the PID namespace an identity names ("" for one recorded
// without it).
func namespaceOf(identity string) string {
	parts := strings.SplitN(identity, ":", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}

// pidNS names this process's PID namespace ("pid:[4026531836]"), or
// "pid:unknown" when /proc does not say.
func pidNS() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "pid:unknown"
	}
	return ns
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown-boot"
	}
	return strings.TrimSpace(string(b))
}
