package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// The admin REST API (seed 000's surface) runs the same operations as the
// hub_* tools:
//
//	GET    /api/servers                    list
//	POST   /api/servers                    register (body: hub_add_server's arguments)
//	GET    /api/servers/{name}             show
//	PUT    /api/servers/{name}             change (body: hub_update_server's arguments)
//	DELETE /api/servers/{name}             remove
//	POST   /api/servers/{name}/connect     connect now
//	POST   /api/servers/{name}/disconnect  disconnect and keep down
//	POST   /api/servers/{name}/restart     restart now
//	POST   /api/servers/{name}/approve     approve what GET showed (body {"digest": …} from GET;
//	                                       always needs the token)
//
// Bodies are application/json only (415), and requests a browser marks as
// cross-origin are refused (403): see checkAPIRequest.
//
// Errors are {"error": CODE, "message": …, "server": name, "timestamp": …}.
func (f *httpFront) adminRoutes(mux *http.ServeMux) {
	h := f.h
	// who names the caller in the audit log: the token's subject with auth.
	who := func(r *http.Request) string { return "api" + principal(tokenInfo(r.Context())) }
	mux.HandleFunc("GET /api/servers", func(w http.ResponseWriter, r *http.Request) {
		res, err := h.opList(r.Context())
		writeAPI(w, http.StatusOK, "", res, err)
	})
	mux.HandleFunc("POST /api/servers", func(w http.ResponseWriter, r *http.Request) {
		args, ok := f.apiArgs(w, r, "", "hub_add_server")
		if !ok {
			return
		}
		res, err := h.opAdd(r.Context(), who(r), args, h.noApprover)
		writeAPI(w, http.StatusCreated, argString(args, "name"), res, err)
	})
	mux.HandleFunc("GET /api/servers/{name}", func(w http.ResponseWriter, r *http.Request) {
		res, err := h.opGet(r.Context(), r.PathValue("name"))
		if err == nil {
			err = h.addApprovalDigest(r.Context(), r.PathValue("name"), &res)
		}
		writeAPI(w, http.StatusOK, r.PathValue("name"), res, err)
	})
	mux.HandleFunc("PUT /api/servers/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		args, ok := f.apiArgs(w, r, name, "hub_update_server")
		if !ok {
			return
		}
		res, err := h.opUpdate(r.Context(), who(r), args, h.noApprover)
		writeAPI(w, http.StatusOK, name, res, err)
	})
	mux.HandleFunc("DELETE /api/servers/{name}", func(w http.ResponseWriter, r *http.Request) {
		res, err := h.opRemove(r.Context(), who(r), r.PathValue("name"))
		writeAPI(w, http.StatusOK, r.PathValue("name"), res, err)
	})
	for _, verb := range []string{"connect", "disconnect", "restart"} {
		mux.HandleFunc("POST /api/servers/{name}/"+verb, func(w http.ResponseWriter, r *http.Request) {
			res, err := h.opLifecycle(r.Context(), who(r), r.PathValue("name"), verb)
			writeAPI(w, http.StatusOK, r.PathValue("name"), res, err)
		})
	}
	mux.HandleFunc("POST /api/servers/{name}/approve", func(w http.ResponseWriter, r *http.Request) {
		if !f.checkApprover(w, r) {
			return
		}
		digest, ok := f.approveBody(w, r)
		if !ok {
			return
		}
		res, err := h.opApprove(r.Context(), who(r), r.PathValue("name"), digest)
		writeAPI(w, http.StatusOK, r.PathValue("name"), res, err)
	})
}

// approveBody reads POST …/approve's body, {"digest": "…"}: the digest GET
// returned with what the person reviewed ("" when the body has none;
// opApprove refuses that).
func (f *httpFront) approveBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	body, ok := f.readBody(w, r)
	if !ok {
		return "", false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return "", true
	}
	var req struct {
		Digest *string `json:"digest"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeAPI(w, 0, name, adminResult{}, errInvalid("the body must be {\"digest\": \"…\"}, the digest GET /api/servers/%s returned: %v", name, err))
		return "", false
	}
	if req.Digest == nil {
		return "", true
	}
	return *req.Digest, true
}

// addApprovalDigest adds to GET /api/servers/{name}'s answer the digest
// POST …/approve takes: of what approving it would cover now (its launch
// spec unless approved, its tool changes), keyed (ApprovalDigest). A hub
// without a store approves nothing: it has none.
func (h *Hub) addApprovalDigest(ctx context.Context, name string, res *adminResult) error {
	if h.opts.Store == nil {
		return nil
	}
	cur, err := h.opts.Store.Get(ctx, name)
	if err != nil {
		return nil // broken or gone: opGet said what it could, and approve refuses
	}
	changes, err := h.changesOf(ctx, name)
	if err != nil {
		return errInternal("cannot read the tool pins", err)
	}
	d, err := h.approvalDigestOf(ctx, cur, changes)
	if err != nil {
		return errInternal("cannot compute the approval digest", err)
	}
	res.data["digest"] = d
	if !cur.Approved() || len(changes.Findings) > 0 {
		res.text += fmt.Sprintf("\nto approve what this shows: POST /api/servers/%s/approve with {\"digest\": %q}", name, d)
	}
	return nil
}

// apiArgs reads a JSON object body and checks it against the schema of the
// admin tool with the same job. name, from the path, fills in "name".
func (f *httpFront) apiArgs(w http.ResponseWriter, r *http.Request, name, tool string) (map[string]json.RawMessage, bool) {
	body, ok := f.readBody(w, r)
	if !ok {
		return nil, false
	}
	var schema map[string]any
	for _, t := range f.h.adminTools() {
		if t.tool.Name == tool {
			schema = t.tool.InputSchema.(map[string]any)
		}
	}
	if schema == nil {
		writeAPI(w, 0, name, adminResult{}, &adminError{http.StatusForbidden, "ADMIN_DISABLED", "admin changes are turned off (admin.tools)"})
		return nil, false
	}
	var probe any
	if err := json.Unmarshal(body, &probe); err != nil {
		writeAPI(w, 0, name, adminResult{}, errInvalid("the body is not valid JSON: %v", err))
		return nil, false
	}
	if _, isObj := probe.(map[string]any); !isObj {
		writeAPI(w, 0, name, adminResult{}, errInvalid("the body must be a JSON object"))
		return nil, false
	}
	if name != "" {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(body, &m)
		if v, ok := m["name"]; ok && string(v) != `"`+name+`"` {
			writeAPI(w, 0, name, adminResult{}, errInvalid("name: the body names another server than the path"))
			return nil, false
		}
		b, _ := json.Marshal(name)
		m["name"] = b
		body, _ = json.Marshal(m)
	}
	args, err := decodeArgs(body, schema)
	if err != nil {
		writeAPI(w, 0, name, adminResult{}, errInvalid("%s", err.Error()))
		return nil, false
	}
	return args, true
}

// writeAPI writes an operation's data, or its error in seed 002's shape.
func writeAPI(w http.ResponseWriter, okStatus int, server string, res adminResult, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		ae := &adminError{http.StatusInternalServerError, "INTERNAL", err.Error()}
		errors.As(err, &ae)
		w.WriteHeader(ae.status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": ae.code, "message": redact.Error(ae.msg), "server": redact.Bound(server), "timestamp": time.Now().UTC().Format(time.RFC3339),
		})
		return
	}
	data := res.data
	if data == nil {
		data = map[string]any{}
	}
	data["message"] = redact.Text(res.text)
	w.WriteHeader(okStatus)
	_ = json.NewEncoder(w).Encode(data)
}
