package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxRemainder bounds what an envelope may hold after its documents (the
// Metadata, a few hundred bytes).
const maxRemainder = 1 << 20

// ReadBatch reads a Cosmos DB trigger's invocation request from body as a
// stream and returns the documents of Data.<binding> and the Metadata. It
// is for a batch too large to hold as one request, which the handler
// still owes an answer: it holds one document at a time, unescaping the
// host's double encoding as it reads, and never the batch's text whole.
// Errors are *MalformedError saying where the stream stops being a batch.
func ReadBatch(body io.Reader, binding string) ([]json.RawMessage, map[string]json.RawMessage, error) {
	br := bufio.NewReaderSize(body, 64<<10)
	d := jsontext.NewDecoder(br, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, Malformed("invocation body must be a JSON object {\"Data\":{...},\"Metadata\":{...}}")
	}
	var docs []json.RawMessage
	var meta map[string]json.RawMessage
	found := false
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return nil, nil, malformed("the invocation body", err)
		}
		switch {
		case strings.EqualFold(name.String(), "Metadata"):
			v, err := d.ReadValue()
			if err != nil {
				return nil, nil, malformed("Metadata", err)
			}
			_ = json.Unmarshal(v, &meta) // unreadable retry bookkeeping costs nothing
		case strings.EqualFold(name.String(), "Data") && !found:
			var rest io.Reader
			if docs, rest, err = streamData(d, br, binding); err != nil {
				return nil, nil, err
			}
			found = true
			if rest != nil { // d is spent: read the Metadata from what follows
				if m := metadataAfter(rest); m != nil {
					meta = m
				}
				return docs, meta, nil
			}
		default:
			if err := d.SkipValue(); err != nil {
				return nil, nil, malformed("the invocation body", err)
			}
		}
	}
	if !found {
		return nil, nil, Malformed("invocation body has no Data object with Data.%s", binding)
	}
	return docs, meta, nil
}

// metadataAfter reads the Metadata from the rest of an envelope after the
// documents' value: the rest of the Data object, then the envelope's
// other members. Nil when there is none, or it cannot be read.
func metadataAfter(rest io.Reader) map[string]json.RawMessage {
	b, err := io.ReadAll(io.LimitReader(rest, maxRemainder))
	if err != nil {
		return nil
	}
	var env struct{ Metadata map[string]json.RawMessage }
	if json.Unmarshal(append([]byte(`{"Data":{"_":0`), b...), &env) != nil {
		return nil
	}
	return env.Metadata
}

// streamData reads the Data object's documents. Given as an array, they
// are read with d, which then reads on; given as a string, they are
// unescaped as they are read, and rest is the stream after the string.
func streamData(d *jsontext.Decoder, br *bufio.Reader, binding string) (docs []json.RawMessage, rest io.Reader, err error) {
	field := "Data." + binding
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, Malformed("Data is not a JSON object")
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return nil, nil, malformed("Data", err)
		}
		if name.String() != binding || docs != nil {
			if err := d.SkipValue(); err != nil {
				return nil, nil, malformed("Data", err)
			}
			continue
		}
		switch d.PeekKind() {
		case '[':
			if docs, err = streamArray(d, field); err != nil {
				return nil, nil, err
			}
			if docs == nil {
				docs = []json.RawMessage{}
			}
			continue
		case '"':
			// A string too large to hold as one token: unescape it as it
			// is read, from the bytes after the name.
			raw := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(d.UnreadBuffer())), br), 64<<10)
			if err := skipTo(raw, '"'); err != nil {
				return nil, nil, malformed(field, err)
			}
			outer := &stringReader{r: raw}
			docs, err := streamLayers(outer, field)
			if err != nil {
				return nil, nil, err
			}
			if _, err := io.Copy(io.Discard, outer); err != nil { // to the string's end
				return nil, nil, malformed(field, err)
			}
			return docs, raw, nil
		}
		return nil, nil, Malformed("%s is not an array of documents (or a JSON string holding one)", field)
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, nil, malformed("Data", err)
	}
	if docs == nil {
		return nil, nil, Malformed("Data has no %s (Data.%s is missing)", binding, binding)
	}
	return docs, nil, nil
}

// streamLayers reads the array a JSON string's content holds, directly or
// inside one more string (the host's double encoding).
func streamLayers(content io.Reader, field string) ([]json.RawMessage, error) {
	r := bufio.NewReaderSize(content, 64<<10)
	first, err := peekNonSpace(r)
	if err != nil {
		return nil, malformed(field, err)
	}
	var inner *stringReader
	if first == '"' {
		_, _ = r.ReadByte()
		inner = &stringReader{r: r}
		r = bufio.NewReaderSize(inner, 64<<10)
		if first, err = peekNonSpace(r); err != nil {
			return nil, malformed(field, err)
		}
		if first != '[' {
			return nil, Malformed("%s is wrapped in more than %d layers of JSON strings, or holds no array", field, MaxStringLayers)
		}
	} else if first != '[' {
		return nil, Malformed("%s is a string whose content is not an array of documents", field)
	}
	docs, err := streamArray(jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)), field)
	if err != nil {
		return nil, err
	}
	if inner != nil {
		if _, err := io.Copy(io.Discard, inner); err != nil { // to the inner string's end
			return nil, malformed(field, err)
		}
	}
	return docs, nil
}

// streamArray reads an array of documents one at a time.
func streamArray(d *jsontext.Decoder, field string) ([]json.RawMessage, error) {
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, Malformed("%s is not an array of documents", field)
	}
	var docs []json.RawMessage
	for i := 0; ; i++ {
		switch k := d.PeekKind(); k {
		case ']':
			if _, err := d.ReadToken(); err != nil {
				return nil, malformed(field, err)
			}
			return docs, nil
		case '{':
		case 0:
			_, err := d.ReadValue()
			return nil, malformed(field, err)
		default:
			return nil, Malformed("%s[%d] is not a JSON object", field, i)
		}
		v, err := d.ReadValue()
		if err != nil {
			return nil, malformed(fmt.Sprintf("%s[%d]", field, i), err)
		}
		docs = append(docs, json.RawMessage(bytes.Clone(v)))
	}
}

// malformed is the 400 for a stream that stops being JSON; it says where,
// not what (a document may be megabytes).
func malformed(what string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return Malformed("%s: the batch is cut short", what)
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return Malformed("%s: malformed JSON at byte %d", what, se.ByteOffset)
	}
	return Malformed("%s: malformed JSON", what)
}

func peekNonSpace(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = r.ReadByte()
		default:
			return b[0], nil
		}
	}
}

// skipTo consumes white space and the name separator up to and including
// want, which must come next.
func skipTo(r *bufio.Reader, want byte) error {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return err
		}
		switch b {
		case ' ', '\t', '\r', '\n', ':':
		case want:
			return nil
		default:
			return fmt.Errorf("want %q, found %q", want, b)
		}
	}
}

// stringReader yields the content of a JSON string, unescaped, from r
// positioned just after its opening quote; it ends at the closing quote.
// Not core/document's reader: that holds a string whole, and this one is a
// batch of megabytes, read a document at a time.
type stringReader struct {
	r       *bufio.Reader
	done    bool
	pending []byte
}

var errBadEscape = errors.New("invalid escape in a JSON string")

func (s *stringReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.pending) > 0 {
			c := copy(p[n:], s.pending)
			s.pending, n = s.pending[c:], n+c
			continue
		}
		if s.done {
			break
		}
		b, err := s.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		switch {
		case b == '"':
			s.done = true
		case b == '\\':
			if s.pending, err = s.escape(); err != nil {
				return n, err
			}
		case b < 0x20:
			return n, fmt.Errorf("control byte %#x in a JSON string", b)
		default:
			p[n] = b
			n++
		}
	}
	if n == 0 && s.done {
		return 0, io.EOF
	}
	return n, nil
}

// escape decodes the escape after a backslash.
func (s *stringReader) escape() ([]byte, error) {
	b, err := s.r.ReadByte()
	if err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	switch b {
	case '"', '\\', '/':
		return []byte{b}, nil
	case 'b':
		return []byte{'\b'}, nil
	case 'f':
		return []byte{'\f'}, nil
	case 'n':
		return []byte{'\n'}, nil
	case 'r':
		return []byte{'\r'}, nil
	case 't':
		return []byte{'\t'}, nil
	case 'u':
		r, err := s.hex4()
		if err != nil {
			return nil, err
		}
		if utf16.IsSurrogate(r) {
			if next, err := s.r.Peek(2); err == nil && string(next) == `\u` {
				_, _ = s.r.Discard(2)
				low, err := s.hex4()
				if err != nil {
					return nil, err
				}
				r = utf16.DecodeRune(r, low)
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(nil, r), nil
	}
	return nil, errBadEscape
}

func (s *stringReader) hex4() (rune, error) {
	var r rune
	for range 4 {
		b, err := s.r.ReadByte()
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		switch {
		case '0' <= b && b <= '9':
			r = r<<4 | rune(b-'0')
		case 'a' <= b && b <= 'f':
			r = r<<4 | rune(b-'a'+10)
		case 'A' <= b && b <= 'F':
			r = r<<4 | rune(b-'A'+10)
		default:
			return 0, errBadEscape
		}
	}
	return r, nil
}
