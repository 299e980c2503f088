// Package codemode runs a script a model wrote, in a sandboxed JavaScript
// runtime, against a [Host] that reaches the hub's tools: hub_run_code.
package codemode
