package hub

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve serves one client session over any go-sdk transport (in-memory,
// stdio, a custom one) until the client disconnects or ctx ends. For stdio
// prefer [Hub.ServeStdio], and for HTTP [Hub.HTTPHandler]: they move
// messages as bytes, while a go-sdk transport decodes and encodes each one.
func (h *Hub) Serve(ctx context.Context, t mcp.Transport) error {
	conn, err := t.Connect(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	s, err := h.newSession(ctx, conn.SessionID(), connOutbox{ctx, conn})
	if err != nil {
		return err
	}
	h.metrics.sessionOpened("custom")
	defer h.metrics.sessionClosed("custom")
	defer s.close()
	read := make(chan error, 1)
	go func() {
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				read <- err
				return
			}
			b, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				read <- err
				return
			}
			s.handle(b)
		}
	}()
	select {
	case err := <-read:
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return nil
	}
}

// connOutbox writes a session's messages to a go-sdk connection.
type connOutbox struct {
	ctx  context.Context
	conn mcp.Connection
}

func (o connOutbox) send(m outMsg) error {
	msg, err := jsonrpc.DecodeMessage(m.data)
	if err != nil {
		return err
	}
	return o.conn.Write(o.ctx, msg)
}
