package dockerws

import "testing"

// The reaper's sleep is found under init's child that runs the reaper
// script as init's user; a sandbox process dressed up as the reaper (an
// orphan under init with the same command line) is not taken for it.
func TestReaperSleepFromTop(t *testing.T) {
	titles := []string{"UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"}
	row := func(uid, pid, ppid, cmd string) []string {
		return []string{uid, pid, ppid, "0", "02:00", "?", "00:00:00", cmd}
	}
	procs := [][]string{
		row("root", "100", "90", "/sbin/docker-init -- sh -c trap 'i=0; ...' USR1"),
		row("65534", "150", "100", "sh -c trap 'i=0; ...' USR1"),
		row("65534", "151", "150", "sleep infinity"),
		row("root", "101", "100", "sh -c trap 'i=0; ...' USR1"),
		row("root", "102", "101", "sleep infinity"),
		row("65534", "160", "0", "sh -c exec sleep 30"),
	}
	l, err := parseTop(titles, procs)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.reaperSleep("100"); got != "102" {
		t.Errorf("reaperSleep = %q, want 102", got)
	}
	if !l.has("160") || l.has("999") {
		t.Error("has")
	}
	if got := l.reaperSleep("90"); got != "" {
		t.Errorf("with init not listed: %q", got)
	}
	// ps aux's titles, as some daemons answer.
	aux := []string{"USER", "PID", "PPID", "%CPU", "ELAPSED", "TTY", "TIME", "COMMAND"}
	if l, err := parseTop(aux, procs); err != nil || l.reaperSleep("100") != "102" {
		t.Errorf("ps aux titles: %v, %v", l, err)
	}
	if _, err := parseTop([]string{"UID", "CMD"}, procs); err == nil {
		t.Error("no PID column: no error")
	}
}
