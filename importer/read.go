package importer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/fleetgraph/fleetgraph/store"
)

// readLines parses in line by line and sends full batches to the writers.
// A document always goes to the same writer (by its id), so the last copy
// of a document in the input is the one stored.
func (im *importer) readLines(ctx context.Context, in io.Reader, queues []chan lineBatch) error {
	r := bufio.NewReaderSize(in, 1<<20)
	batches := make([]lineBatch, len(queues))
	send := func(w int) error {
		select {
		case queues[w] <- batches[w]:
			batches[w] = lineBatch{}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line, length, err := readLine(r, im.MaxLineBytes)
		if length > 0 {
			im.read.Add(length)
			im.lines.Add(1)
		}
		switch {
		case line == nil && length > 0:
			im.reportBad(n, fmt.Errorf("longer than %d bytes (the --max-line-bytes limit): %d bytes", im.MaxLineBytes, length))
		case len(bytes.TrimSpace(line)) > 0:
			if n == 1 {
				line = bytes.TrimPrefix(line, utf8BOM) // as editors on Windows save a file
			}
			d, perr := store.ParseDocument(im.Kind, line)
			if perr != nil {
				im.noteShape(n, line)
				im.reportBad(n, perr)
				break
			}
			w := writerOf(d.DocID, len(queues))
			b := &batches[w]
			b.docs, b.lines, b.size = append(b.docs, d), append(b.lines, n), b.size+len(d.Doc)
			if len(b.docs) >= im.Batch || b.size >= maxBatchBytes {
				if err := send(w); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			for w := range batches {
				if len(batches[w].docs) > 0 {
					if err := send(w); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read line %d: %w", n, err)
		}
	}
}

// readLine reads the next line of r: its text without the line end, and
// its length in bytes with the line end (0 at the end of the input). A
// line longer than max bytes (line end not counted) is read to its end but
// not kept: its text is nil. err is io.EOF when the input ends with (or
// right after) this line.
func readLine(r *bufio.Reader, max int) (line []byte, length int64, err error) {
	keep := true
	for {
		frag, ferr := r.ReadSlice('\n')
		length += int64(len(frag))
		if keep {
			// max+2 leaves room for the line end (\r\n), trimmed below.
			if len(line)+len(frag) > max+2 {
				keep, line = false, nil
			} else {
				line = append(line, frag...)
			}
		}
		if ferr == bufio.ErrBufferFull {
			continue
		}
		if keep {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if len(line) > max {
				line = nil
			}
		}
		return line, length, ferr
	}
}

// utf8BOM is the byte order mark some editors put at the start of a UTF-8
// file; a first line starting with it is read without it.
var utf8BOM = []byte("\ufeff")

// writerOf picks the writer of a document id (FNV-1a).
func writerOf(docID string, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(docID); i++ {
		h = (h ^ uint32(docID[i])) * 16777619
	}
	return int(h % uint32(n))
}
