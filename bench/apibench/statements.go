package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// counter is a second fleetgraph process, connected to PostgreSQL through
// the counting proxy, that answers the workloads one request at a time for
// statements per request. The timed fleetgraph connects directly, so the
// proxy costs it nothing.
type counter struct {
	cmd   *exec.Cmd
	proxy *stmtProxy
	base  string
}

func startCounter(ctx context.Context, bin, databaseURL string) (*counter, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	proxy, err := startProxy(u.Host)
	if err != nil {
		return nil, err
	}
	u.Host = proxy.addr()
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	addr, err := freeAddr()
	if err != nil {
		proxy.close()
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", addr, "--database-url", u.String())
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		proxy.close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	c := &counter{cmd: cmd, proxy: proxy, base: "http://" + addr}
	if err := waitReady(c.base+"/readyz", 60*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *counter) stop() {
	_ = c.cmd.Process.Signal(os.Interrupt)
	_ = c.cmd.Wait()
	c.proxy.close()
}

// perRequest sends n requests of s (rewritten from fleetgraph's base to the
// counting instance) one after the other and divides the statements.
func (c *counter) perRequest(client *http.Client, s side, fleetgraphBase string, n int) (float64, error) {
	s.url = c.base + strings.TrimPrefix(s.url, fleetgraphBase)
	if _, err := fetch(context.Background(), client, s); err != nil { // warms the statement cache
		return 0, err
	}
	before := c.proxy.statements.Load()
	for range n {
		if _, err := fetch(context.Background(), client, s); err != nil {
			return 0, err
		}
	}
	return float64(c.proxy.statements.Load()-before) / float64(n), nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitReady(u string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s", u, limit)
}
