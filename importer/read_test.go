package importer

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     []string // each line's text; "<long>" for a line not kept
		lengths  []int64
	}{
		{"lines and their ends", "ab\ncd\n", 10, []string{"ab", "cd", ""}, []int64{3, 3, 0}},
		{"no final line end", "ab\ncd", 10, []string{"ab", "cd"}, []int64{3, 2}},
		{"CRLF trimmed, counted", "ab\r\ncd\r\n", 10, []string{"ab", "cd", ""}, []int64{4, 4, 0}},
		{"exactly max bytes", "abcd\r\n", 4, []string{"abcd", ""}, []int64{6, 0}},
		{"one byte over max", "abcde\nab\n", 4, []string{"<long>", "ab", ""}, []int64{6, 3, 0}},
		{"over max, last line", "ab\nabcdefgh", 4, []string{"ab", "<long>"}, []int64{3, 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tc.in), 16) // lines span buffer fills
			var got []string
			var lengths []int64
			for {
				line, n, err := readLine(r, tc.max)
				if line == nil && n > 0 {
					got = append(got, "<long>")
				} else {
					got = append(got, string(line))
				}
				lengths = append(lengths, n)
				if err != nil {
					if err != io.EOF {
						t.Fatal(err)
					}
					break
				}
			}
			if fmt.Sprint(got, lengths) != fmt.Sprint(tc.want, tc.lengths) {
				t.Errorf("lines %q lengths %v, want %q %v", got, lengths, tc.want, tc.lengths)
			}
		})
	}
}

func TestWriterOfIsStableAndInRange(t *testing.T) {
	seen := map[int]bool{}
	for i := range 100 {
		id := fmt.Sprintf("doc-%d", i)
		w := writerOf(id, 3)
		if w < 0 || w >= 3 || writerOf(id, 3) != w {
			t.Fatalf("writerOf(%q, 3) = %d", id, w)
		}
		seen[w] = true
	}
	if len(seen) != 3 {
		t.Errorf("100 ids went to writers %v, want all 3", seen)
	}
}
