package hub

import "testing"

// TestRPCErrorCode: the code of a JSON-RPC error object as a span records
// it, 0 for what is no integer.
func TestRPCErrorCode(t *testing.T) {
	for _, c := range []struct {
		obj  string
		want int64
	}{
		{`{"code":-32601,"message":"no"}`, -32601},
		{`{"message":"x","code": 42}`, 42},
		{`{"code":0}`, 0},
		{`{"code":"-32601"}`, 0},
		{`{"code":1.5}`, 0},
		{`{"code":99999999999999999999}`, 0},
		{`{"message":"none"}`, 0},
		{`not json`, 0},
	} {
		if got := rpcErrorCode([]byte(c.obj)); got != c.want {
			t.Errorf("rpcErrorCode(%s) = %d, want %d", c.obj, got, c.want)
		}
	}
}
