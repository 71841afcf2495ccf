package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
)

// stmtProxy forwards PostgreSQL connections and counts the statements the
// clients run: frontend Query ('Q', simple protocol) and Execute ('E',
// extended protocol) messages. It needs sslmode=disable.
type stmtProxy struct {
	ln         net.Listener
	upstream   string
	statements atomic.Int64
}

func startProxy(upstream string) (*stmtProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	p := &stmtProxy{ln: ln, upstream: upstream}
	go p.accept()
	return p, nil
}

func (p *stmtProxy) addr() string { return p.ln.Addr().String() }

func (p *stmtProxy) close() { _ = p.ln.Close() }

func (p *stmtProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *stmtProxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		_, _ = io.Copy(client, server)
		_ = client.Close()
	}()
	_ = p.forwardFrontend(client, server)
}

// Protocol codes of startup-phase packets that are followed by another one.
const (
	sslRequest    = 80877103
	gssencRequest = 80877104
)

// forwardFrontend copies the client's messages to the server, counting
// statements: first the untyped startup packet(s), then typed messages.
func (p *stmtProxy) forwardFrontend(client io.Reader, server io.Writer) error {
	for {
		pkt, err := readPacket(client, false)
		if err != nil {
			return err
		}
		if _, err := server.Write(pkt); err != nil {
			return err
		}
		code := binary.BigEndian.Uint32(pkt[4:8])
		if code != sslRequest && code != gssencRequest {
			break
		}
	}
	for {
		msg, err := readPacket(client, true)
		if err != nil {
			return err
		}
		if msg[0] == 'Q' || msg[0] == 'E' {
			p.statements.Add(1)
		}
		if _, err := server.Write(msg); err != nil {
			return err
		}
	}
}

// readPacket reads one message: [type byte] int32 length (counting itself)
// and the payload.
func readPacket(r io.Reader, typed bool) ([]byte, error) {
	head := 4
	if typed {
		head = 5
	}
	buf := make([]byte, head, 512)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(buf[head-4:]))
	if n < 4 || (!typed && n < 8) {
		return nil, errors.New("proxy: bad message length")
	}
	buf = append(buf, make([]byte, n-4)...)
	if _, err := io.ReadFull(r, buf[head:]); err != nil {
		return nil, err
	}
	return buf, nil
}
