package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// The measurements behind this package (see the note at the top of
// scan.go): forwarding a result the way the hub does, by scanning the
// envelope and splicing a new id around the original bytes, against doing
// it with encoding/json (decode the envelope, re-encode it with the id).

// stdEnvelope is a JSON-RPC message as encoding/json reads it.
type stdEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

func largeResult() []byte {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog.\\n", 100*1024/46)
	return []byte(`{"jsonrpc":"2.0","id":"h1","result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
}

func BenchmarkForwardResultWire(b *testing.B) {
	line := largeResult()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	dst := make([]byte, 0, len(line)+64)
	for b.Loop() {
		m, err := Parse(line)
		if err != nil {
			b.Fatal(err)
		}
		dst = AppendResult(dst[:0], []byte("42"), m.Result)
	}
}

func BenchmarkForwardResultEncodingJSON(b *testing.B) {
	line := largeResult()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		var m stdEnvelope
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
		m.ID = json.RawMessage("42")
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}
