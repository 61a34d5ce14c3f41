package theme

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

var allProfiles = []colorprofile.Profile{colorprofile.TrueColor, colorprofile.ANSI256, colorprofile.ANSI, colorprofile.ASCII, colorprofile.NoTTY}

// Body text is the terminal's own foreground in every palette: a fixed
// white (or black) vanishes on a terminal whose background is not the one
// assumed, as when it does not answer the background query.
func TestBodyTextHasNoColour(t *testing.T) {
	for _, dark := range []bool{true, false} {
		for _, prof := range allProfiles {
			th := NewFor(dark, prof)
			styles := map[string]string{"Text": th.Text.Render("x"), "DiffFile": th.DiffFile.Render("x")}
			if dark && prof == colorprofile.ANSI {
				// 16 colours on a dark background: the muted text too.
				styles["Muted"] = th.Muted.Render("x")
			}
			for name, got := range styles {
				if strings.Contains(got, "38;") || strings.Contains(got, "\x1b[3") || strings.Contains(got, "\x1b[9") {
					t.Errorf("dark=%v %v: %s has a foreground colour: %q", dark, prof, name, got)
				}
			}
		}
	}
}

// Code on a background of its own has a foreground of its own (the
// terminal's could be the same as that background); code without one has
// none.
func TestCodeKeepsItsColoursTogether(t *testing.T) {
	for _, dark := range []bool{true, false} {
		for _, prof := range allProfiles {
			sy := NewFor(dark, prof).Syntax
			for name, st := range map[string]string{"Plain": sy.Plain.Render("x"), "Header": sy.Header.Render("x"), "Keyword": sy.Keyword.Render("x")} {
				hasBg := strings.Contains(st, "48;")
				hasFg := strings.Contains(st, "38;")
				if hasBg && !hasFg {
					t.Errorf("dark=%v %v: %s has a background and no foreground: %q", dark, prof, name, st)
				}
				if prof <= colorprofile.ASCII && strings.Contains(st, "\x1b[") {
					t.Errorf("dark=%v %v: %s is styled without colour: %q", dark, prof, name, st)
				}
			}
		}
	}
}
