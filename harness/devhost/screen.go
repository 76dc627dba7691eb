package devhost

import (
	"strings"
	"unicode/utf8"
)

// The terminal's lines fit ScreenWidth columns: a line's text follows its
// head when it fits, else it is wrapped below it, indented under the
// label column, so a long error never runs off an 80 or 100 column pane.
// Only a ready-to-paste curl is longer: breaking it would break the paste.
const (
	ScreenWidth = 100
	// WrapIndent is the continuation lines' indent: under the label.
	WrapIndent = 13
)

// layout is a line as printed, each line ending in a newline: head (who),
// then what (request and resource, may be ""), then text. What does not
// fit goes below, word-wrapped under the indent.
func layout(head, what, text string) string {
	first, rest := head, ""
	switch {
	case fits(join(head, " ", what, "  ", text)):
		return join(head, " ", what, "  ", text) + "\n"
	case fits(join(head, " ", what)):
		first, rest = join(head, " ", what), text
	default:
		rest = join(what, "  ", text)
	}
	var b strings.Builder
	b.WriteString(first + "\n")
	if rest == "" {
		return b.String()
	}
	pad := strings.Repeat(" ", WrapIndent)
	for _, l := range wrap(rest, ScreenWidth-WrapIndent) {
		b.WriteString(pad + l + "\n")
	}
	return b.String()
}

func fits(s string) bool { return utf8.RuneCountInString(s) <= ScreenWidth }

// join is a, then each non-empty part after its separator.
func join(a string, sepPart ...string) string {
	for i := 0; i+1 < len(sepPart); i += 2 {
		switch sep, part := sepPart[i], sepPart[i+1]; {
		case part == "":
		case a == "":
			a = part
		default:
			a += sep + part
		}
	}
	return a
}

// wrap breaks s into lines of at most width bytes, at spaces where it can.
func wrap(s string, width int) []string {
	var out []string
	for len(s) > width {
		cut := strings.LastIndexByte(s[:width+1], ' ')
		if cut <= 0 {
			cut = width
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimRight(s[:cut], " "))
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(out, s)
}

// Unwrap joins each wrapped line with its continuation lines, so a
// reader of the terminal (a test, a grep) sees one line an event.
func Unwrap(screen string) string {
	lines := strings.Split(screen, "\n")
	out := make([]string, 0, len(lines))
	pad := strings.Repeat(" ", WrapIndent)
	for _, l := range lines {
		rest, cont := strings.CutPrefix(l, pad)
		if cont && len(out) > 0 && rest != "" && rest[0] != ' ' && !strings.HasPrefix(rest, "curl ") {
			out[len(out)-1] += " " + rest
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
