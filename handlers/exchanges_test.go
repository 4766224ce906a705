package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
)

// exchange is one request a handler test sent through testEnv.do and the
// answer it got. TestMain checks every one against the OpenAPI document
// once the tests have run.
type exchange struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
	Status              int
	RespHeader          http.Header
	RespBody            []byte
	Test                string
}

type exchangeLog struct {
	mu   sync.Mutex
	list []exchange
}

// exchanges collects what testEnv.do sends. Benchmarks and fuzzing send
// through it too; recording is cheap and they are not run with the tests.
var exchanges exchangeLog

func (l *exchangeLog) record(req *http.Request, body any, rec *httptest.ResponseRecorder) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		raw, _ = json.Marshal(b)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) >= 200_000 {
		return // a fuzz or benchmark run: enough samples
	}
	l.list = append(l.list, exchange{
		Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Header: req.Header.Clone(), Body: raw,
		Status: rec.Code, RespHeader: rec.Header().Clone(), RespBody: append([]byte(nil), rec.Body.Bytes()...),
	})
}

func (l *exchangeLog) all() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]exchange(nil), l.list...)
}
