package testsupport

import (
	"net"
	"strconv"
	"testing"
)

// FreePort is a loopback port free a moment ago, for a process a test
// starts with its port set (the Functions host's, say).
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
