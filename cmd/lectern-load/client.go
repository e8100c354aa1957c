package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// conn is one worker's keep-alive HTTP/1.1 connection. Like wrk, it writes
// a request and reads the response inline, with none of net/http's
// per-connection goroutines, so the load generator takes as little of the
// shared CPU as it can. It handles Content-Length and chunked bodies and
// reconnects when the server closes the connection.
type conn struct {
	addr string
	from net.IP // the local address to dial from; nil: any
	c    net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	body []byte
}

// response is what the scenarios read of an answer.
type response struct {
	status   int
	location []byte
	cookies  [][]byte // Set-Cookie values up to the first ';'
	body     []byte   // valid until the next request on the connection
}

func newConn(addr string) *conn { return &conn{addr: addr} }

func (c *conn) dial() error {
	d := net.Dialer{Timeout: 5 * time.Second}
	if c.from != nil {
		d.LocalAddr = &net.TCPAddr{IP: c.from}
	}
	nc, err := d.Dial("tcp", c.addr)
	if err != nil {
		return err
	}
	c.c, c.r, c.w = nc, bufio.NewReaderSize(nc, 16<<10), bufio.NewWriterSize(nc, 8<<10)
	return nil
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

// do sends one request. host is the Host header (the site); headers are
// "Name: value" lines without CRLF.
func (c *conn) do(method, host, path string, headers []string, body []byte) (*response, error) {
	for attempt := 0; ; attempt++ {
		if c.c == nil {
			if err := c.dial(); err != nil {
				return nil, err
			}
		}
		resp, err := c.roundTrip(method, host, path, headers, body)
		if err == nil {
			return resp, nil
		}
		c.close()
		if attempt == 1 || !errors.Is(err, errStale) {
			return nil, err
		}
	}
}

// errStale: the server closed an idle connection before we wrote.
var errStale = errors.New("stale connection")

func (c *conn) roundTrip(method, host, path string, headers []string, body []byte) (*response, error) {
	w := c.w
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(path)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	for _, h := range headers {
		w.WriteString(h)
		w.WriteString("\r\n")
	}
	if body != nil {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.Itoa(len(body)))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	if err := w.Flush(); err != nil {
		return nil, errStale
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF {
			return nil, errStale
		}
		return nil, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return nil, fmt.Errorf("bad status line %q", line)
	}
	resp := &response{}
	resp.status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return nil, err
	}
	length, chunked, closeAfter := -1, false, false
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(value))
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Location")):
			resp.location = append([]byte(nil), value...)
		case bytes.EqualFold(name, []byte("Set-Cookie")):
			v, _, _ := bytes.Cut(value, []byte(";"))
			resp.cookies = append(resp.cookies, append([]byte(nil), v...))
		case bytes.EqualFold(name, []byte("Connection")):
			closeAfter = bytes.EqualFold(value, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		for {
			line, err := c.r.ReadSlice('\n')
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.Split(line, []byte(";"))[0])), 16, 64)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				if _, err := c.r.ReadSlice('\n'); err != nil {
					return nil, err
				}
				break
			}
			start := len(c.body)
			c.body = append(c.body, make([]byte, n)...)
			if _, err := io.ReadFull(c.r, c.body[start:]); err != nil {
				return nil, err
			}
			if _, err := c.r.Discard(2); err != nil {
				return nil, err
			}
		}
	case length > 0:
		c.body = append(c.body, make([]byte, length)...)
		if _, err := io.ReadFull(c.r, c.body); err != nil {
			return nil, err
		}
	}
	resp.body = c.body
	if closeAfter {
		c.close()
	}
	return resp, nil
}
