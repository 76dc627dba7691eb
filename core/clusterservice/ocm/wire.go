package ocm

import (
	"slices"
	"strconv"
	"unsafe"
)

// wire reads the JSON of a list page CS sent, for the few members a poll
// decides on, without building the SDK's objects.
//
// Why hand-written: the SDK's list reader (ocm-api-model's ReadClusterList
// on json-iterator) builds every member of every item, and on the
// unchanged poll tick it was a large share of hcpops's CPU. A reader of
// the same members on the standard library's jsontext.Decoder was no
// faster than the SDK's, encoding/json/v2 into a struct of them not much
// faster, and both allocate hundreds of times a page or more; this one
// takes a fraction of their time and allocates almost nothing
// (BenchmarkClusterPage; figures in
// docs/decisions/batch-polling.md#the-wire-reader).
//
// It is conservative, not complete: it reads the JSON that CS and the
// simulator send (objects, arrays, strings without escapes, plain
// numbers) and gives up on anything else (an escape or a null in a member
// it reads, a duplicate or empty member name, a number form parsers could
// disagree on, a link where an object should be); the SDK's reader then
// reads the page, as it did before. It checks the syntax of the members
// it skips, not their types: a page the SDK refuses only over a member the
// poll never reads (a timestamp it cannot parse, a flag sent as a string)
// is read for the members the poll does read. FuzzClusterPage and
// FuzzNodePoolPage hold every page it reads to the SDK's reading of it, or
// of it cut down to those members when the SDK refuses the whole.
type wire struct {
	s     string // the page; strings handed out are substrings of it
	i     int
	ok    bool
	depth int
}

// maxDepth bounds nesting: CS's objects nest a few levels; deeper is
// left to the SDK's reader, whose own bound is 10,000.
const maxDepth = 32

// newWire reads body, which must not change afterwards: the strings the
// reader hands out share its bytes.
func newWire(body []byte) *wire {
	if len(body) == 0 {
		return &wire{}
	}
	return &wire{s: unsafe.String(&body[0], len(body)), ok: true}
}

func (w *wire) fail() bool {
	w.ok = false
	return false
}

// space skips white space. Its loop keeps its place in a local: through
// w every byte was a store, and much of the SDK's indented pages is white
// space (docs/decisions/batch-polling.md#the-wire-reader).
func (w *wire) space() {
	s, i := w.s, w.i
	for i < len(s) && isSpace[s[i]] {
		i++
	}
	w.i = i
}

var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// strStop are the bytes that end a string this reader reads: its closing
// quote, and what it gives up on (an escape, a control character).
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// peek is the next byte after white space, 0 at the end.
func (w *wire) peek() byte {
	w.space()
	if w.i >= len(w.s) {
		return 0
	}
	return w.s[w.i]
}

func (w *wire) expect(c byte) bool {
	if !w.ok || w.peek() != c {
		return w.fail()
	}
	w.i++
	return true
}

// end says whether nothing but white space is left.
func (w *wire) end() bool {
	if w.peek() != 0 {
		return w.fail()
	}
	return w.ok
}

// str reads a string with no escape in it, in one pass: the strings of
// a page are short, and two searches and a check of each cost more.
func (w *wire) str() string {
	if !w.expect('"') {
		return ""
	}
	s, i := w.s, w.i
	j := i
	for j < len(s) && !strStop[s[j]] {
		j++
	}
	if j == len(s) || s[j] != '"' {
		w.fail()
		return ""
	}
	w.i = j + 1
	return s[i:j]
}

// count reads a count: digits only, as CS writes page, size and total.
func (w *wire) count() int {
	w.space()
	start := w.i
	whole, frac, exp := w.number()
	if !w.ok || w.s[start] == '-' || whole > 9 || frac > 0 || exp {
		w.fail()
		return 0
	}
	v, _ := strconv.Atoi(w.s[start:w.i])
	return v
}

// decimal reads a number of at most 9 digits before and 6 after the
// point, the forms on which every float parser agrees.
func (w *wire) decimal() float64 {
	w.space()
	start := w.i
	whole, frac, exp := w.number()
	if !w.ok || whole > 9 || frac > 6 || exp {
		w.fail()
		return 0
	}
	v, err := strconv.ParseFloat(w.s[start:w.i], 64)
	if err != nil {
		w.fail()
	}
	return v
}

// number reads past a JSON number and says how many digits it has before
// and after the point and whether it has an exponent.
func (w *wire) number() (whole, frac int, exp bool) {
	if w.i < len(w.s) && w.s[w.i] == '-' {
		w.i++
	}
	first := w.i
	if whole = w.digits(); whole == 0 || (whole > 1 && w.s[first] == '0') {
		w.fail()
	}
	if w.i < len(w.s) && w.s[w.i] == '.' {
		w.i++
		if frac = w.digits(); frac == 0 {
			w.fail()
		}
	}
	if w.i < len(w.s) && (w.s[w.i] == 'e' || w.s[w.i] == 'E') {
		exp = true
		w.i++
		if w.i < len(w.s) && (w.s[w.i] == '+' || w.s[w.i] == '-') {
			w.i++
		}
		if w.digits() == 0 {
			w.fail()
		}
	}
	if w.delimited() {
		w.fail()
	}
	return whole, frac, exp
}

func (w *wire) digits() int {
	start := w.i
	for w.i < len(w.s) && w.s[w.i] >= '0' && w.s[w.i] <= '9' {
		w.i++
	}
	return w.i - start
}

// delimited says whether a number ran into something that is not its end
// (an exponent, a second point, a letter): then it is not one we read.
func (w *wire) delimited() bool {
	if w.i >= len(w.s) {
		return false
	}
	switch w.s[w.i] {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return false
	}
	return true
}

// object reads an object, calling member for each name; member reads the
// value and says whether it kept it (false: skipped). A kept name seen
// twice gives the page up: which copy a reader keeps is where readers
// differ.
func (w *wire) object(member func(name string) bool) bool {
	if !w.expect('{') || !w.nest() {
		return false
	}
	defer w.unnest()
	if w.peek() == '}' {
		w.i++
		return true
	}
	var kept [maxKept]string
	n := 0
	for w.ok {
		name := w.str()
		if name == "" || !w.expect(':') { // the SDK's readers stop at an empty name
			return w.fail()
		}
		if member(name) {
			if n == maxKept || slices.Contains(kept[:n], name) {
				return w.fail()
			}
			kept[n], n = name, n+1
		}
		switch w.peek() {
		case ',':
			w.i++
		case '}':
			w.i++
			return w.ok
		default:
			return w.fail()
		}
	}
	return false
}

// maxKept is more members than any object read keeps.
const maxKept = 16

func (w *wire) nest() bool {
	if w.depth++; w.depth > maxDepth {
		return w.fail()
	}
	return true
}

func (w *wire) unnest() { w.depth-- }

// array reads an array, calling elem to read each element.
func (w *wire) array(elem func()) bool {
	if !w.expect('[') || !w.nest() {
		return false
	}
	defer w.unnest()
	if w.peek() == ']' {
		w.i++
		return true
	}
	for w.ok {
		elem()
		switch w.peek() {
		case ',':
			w.i++
		case ']':
			w.i++
			return w.ok
		default:
			return w.fail()
		}
	}
	return false
}

// skip reads past a value this reader does not keep. Its strings and
// numbers are held to the same forms as the ones it keeps.
func (w *wire) skip() {
	switch w.peek() {
	case '{':
		w.object(func(string) bool { w.skip(); return false })
	case '[':
		w.array(w.skip)
	case '"':
		w.skipStr()
	case 't':
		w.literal("true")
	case 'f':
		w.literal("false")
	case 'n':
		w.literal("null")
	default:
		w.space()
		w.number()
	}
}

// skipStr reads past a string, escapes and all.
func (w *wire) skipStr() {
	if !w.expect('"') {
		return
	}
	s, i := w.s, w.i
	for {
		for i < len(s) && !strStop[s[i]] {
			i++
		}
		if i >= len(s) {
			w.fail()
			return
		}
		switch c := s[i]; {
		case c == '"':
			w.i = i + 1
			return
		case c < 0x20 || i+1 >= len(s): // a control character, or an escape cut short
			w.fail()
			return
		}
		e := s[i+1] // an escape's
		i += 2
		switch e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if len(s)-i < 4 {
				w.fail()
				return
			}
			for _, h := range []byte(s[i : i+4]) {
				if !isHex(h) {
					w.fail()
					return
				}
			}
			i += 4
		default:
			w.fail()
			return
		}
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (w *wire) literal(lit string) {
	if len(w.s)-w.i < len(lit) || w.s[w.i:w.i+len(lit)] != lit {
		w.fail()
		return
	}
	w.i += len(lit)
	if w.delimited() {
		w.fail()
	}
}
