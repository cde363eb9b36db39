package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ocrdraft/ocrdraft/internal/version"
)

// versionInfo handles GET /version: the running build, open as the probes are, so that an
// operator or a deploy script can tell which build answers without a key.
func (s *Server) versionInfo(c echo.Context) error {
	return c.JSON(http.StatusOK, s.version)
}

// buildVersion is cfg's Version, or the running build's when cfg leaves it empty.
func buildVersion(cfg Config) version.Info {
	if cfg.Version.Version != "" {
		return cfg.Version
	}
	return version.Read()
}
