package server

import (
	"embed"
	"io/fs"
	"net/http"
	"os"
)

//go:embed web
var webFS embed.FS

// dashboard serves the embedded dashboard: no CDN, the machine may be
// offline.
func dashboard() http.Handler {
	sub, err := fs.Sub(webFS, "web")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w.Header())
		files.ServeHTTP(w, r)
	})
}

// Dashboard is the embedded dashboard, for the hub to serve over its own
// API.
func Dashboard() http.Handler { return dashboard() }

func statSize(path string) (int64, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

//go:embed openapi.json
var openAPI []byte

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
