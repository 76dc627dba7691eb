package benchmark

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// mappedRSS is how much of the file at path is resident through this
// process's memory maps (/proc/self/smaps): the embedded store's bbolt
// file, which RSS counts although the Go heap does not. 0 where there is
// no /proc.
func mappedRSS(path string) int64 {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	var total int64
	inFile := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"): // a mapping's header line
			inFile = len(f) >= 6 && f[5] == path
		case inFile && len(f) == 3 && f[0] == "Rss:" && f[2] == "kB":
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				total += kb << 10
			}
		}
	}
	return total
}
