package server

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/parse"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// extract handles POST /v1/extract: page images in, a merged draft out.
func (s *Server) extract(c echo.Context) error {
	if s.cfg.Extractor == nil {
		return s.notConfigured()
	}
	held, err := s.readTurn(c)
	if err != nil {
		return err
	}
	defer held.Close() // Extract gives it back as it goes; this covers every other way out
	// The context alone does not stop a blocked read: without a read deadline, a body trickling
	// in would keep its share of the upload memory past the request's deadline.
	if dl, ok := c.Request().Context().Deadline(); ok {
		_ = http.NewResponseController(c.Response()).SetReadDeadline(dl) // unsupported in tests
	}
	images, err := s.images(c)
	if err != nil {
		return err
	}
	size := int64(0)
	for _, im := range images {
		size += int64(len(im))
	}
	held.Give(held.Held() - size) // the body around the images is read and gone
	c.Set(ctxPages, len(images))
	res, err := s.cfg.Extractor.Extract(c.Request().Context(), images, held)
	if err != nil {
		return err
	}
	c.Set(ctxMeta, &res.Meta)
	c.Set(ctxIndicators, len(res.Draft.Indicators))
	return c.JSON(http.StatusOK, res)
}

// images reads the page images of a request, multipart or JSON, enforcing the page count and the
// per-image size while reading.
func (s *Server) images(c echo.Context) ([][]byte, error) {
	mt, params, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	switch mt {
	case "multipart/form-data":
		return s.multipartImages(c, params["boundary"])
	case "application/json":
		return s.jsonImages(c)
	default:
		return nil, problem.Errorf(problem.UnsupportedMediaType,
			"send multipart/form-data with one image part per page, or application/json {\"images\": [{\"data\": \"<base64>\"}]}; got %q", mt)
	}
}

// uploadBuffer is the read buffer in front of a multipart body. mime/multipart reads through a
// 4 KB buffer of its own, which alone would make every 4 KB of an upload one read system call
// (256 for a 1 MB photo; with this, a few dozen).
const uploadBuffer = 64 << 10

func (s *Server) multipartImages(c echo.Context, boundary string) ([][]byte, error) {
	if boundary == "" {
		return nil, problem.Errorf(problem.InvalidRequest, "the multipart body cannot be read: Content-Type has no boundary")
	}
	mr := multipart.NewReader(bufio.NewReaderSize(c.Request().Body, uploadBuffer), boundary)
	var images [][]byte
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bodyErr(err, "the multipart body is malformed")
		}
		if part.FormName() != "image" {
			_, _ = io.Copy(io.Discard, part) // other fields are ignored
			continue
		}
		if len(images) == s.cfg.MaxPages {
			return nil, extract.TooManyPages(s.cfg.MaxPages)
		}
		// The body's size bounds the part's; with one image it is a close fit.
		data, err := intake.ReadAllSized(part, s.cfg.MaxImageBytes, c.Request().ContentLength)
		if err != nil {
			return nil, bodyErr(err, "the image part cannot be read")
		}
		images = append(images, data)
	}
	if len(images) == 0 {
		return nil, problem.Errorf(problem.InvalidRequest, "no part named \"image\": send one image part per page")
	}
	return images, nil
}

// ExtractRequest is the JSON form of /v1/extract.
type ExtractRequest struct {
	Images []PageImage `json:"images" desc:"One image per page, in order."`
}

// PageImage is one page of an ExtractRequest.
type PageImage struct {
	Data string `json:"data" format:"byte" desc:"The image as base64 (a data: URL is accepted too). Its type is sniffed from its bytes."`
}

func (s *Server) jsonImages(c echo.Context) ([][]byte, error) {
	var req ExtractRequest
	if err := json.NewDecoder(c.Request().Body).Decode(&req); err != nil {
		return nil, bodyErr(err, "the JSON body is malformed")
	}
	if len(req.Images) == 0 {
		return nil, problem.Errorf(problem.InvalidRequest, "images is empty: send one {\"data\": \"<base64>\"} per page")
	}
	if len(req.Images) > s.cfg.MaxPages {
		return nil, extract.TooManyPages(s.cfg.MaxPages)
	}
	images := make([][]byte, len(req.Images))
	for i, im := range req.Images {
		data := im.Data
		if strings.HasPrefix(data, "data:") { // a data URL: the type is sniffed anyway
			if _, after, ok := strings.Cut(data, ","); ok {
				data = after
			}
		}
		data = strings.TrimRight(data, "=")
		if int64(base64.RawStdEncoding.DecodedLen(len(data))) > s.cfg.MaxImageBytes {
			return nil, problem.Errorf(problem.PayloadTooLarge, "images[%d] is larger than the %d-byte limit", i, s.cfg.MaxImageBytes)
		}
		b, err := base64.RawStdEncoding.DecodeString(data)
		if err != nil {
			return nil, problem.Errorf(problem.InvalidRequest, "images[%d].data is not base64", i)
		}
		images[i] = b
		req.Images[i].Data = "" // let the base64 text go
	}
	return images, nil
}

// bodyErr keeps a size error's code (the body limit or the image limit) and calls anything else
// a malformed request.
func bodyErr(err error, what string) error {
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
		return problem.Errorf(problem.PayloadTooLarge, "the request body is larger than the limit")
	}
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &problem.Error{Code: problem.InvalidRequest, Detail: "the request body did not arrive within the request deadline", Err: err}
	}
	return &problem.Error{Code: problem.InvalidRequest, Detail: what, Err: err}
}

// ParseRequest is the JSON form of /v1/parse.
type ParseRequest struct {
	Reply        string `json:"reply" desc:"The model's reply, verbatim."`
	FinishReason string `json:"finishReason,omitempty" desc:"The model's finish reason; length means the reply was cut at the token limit."`
}

// ParseMeta tells how a replayed reply was read.
type ParseMeta struct {
	Stage     parse.Stage `json:"stage"`
	Truncated bool        `json:"truncated"`
}

// ParseResponse is the answer of /v1/parse.
type ParseResponse struct {
	Draft    schema.OcrDraft  `json:"draft"`
	Warnings []schema.Warning `json:"warnings"`
	Meta     ParseMeta        `json:"meta"`
}

// parse handles POST /v1/parse: a captured model reply in, the draft out, no model call.
func (s *Server) parse(c echo.Context) error {
	mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	var req ParseRequest
	switch mt {
	case "application/json":
		if err := json.NewDecoder(c.Request().Body).Decode(&req); err != nil {
			return bodyErr(err, "the JSON body is malformed: want {\"reply\": \"...\", \"finishReason\": \"stop\"}")
		}
	case "text/plain", "":
		b, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return bodyErr(err, "the body cannot be read")
		}
		req.Reply = string(b)
	default:
		return problem.Errorf(problem.UnsupportedMediaType, "send text/plain (the reply) or application/json {\"reply\": \"...\"}; got %q", mt)
	}
	out, err := s.cfg.Builder.FromReply(req.Reply, req.FinishReason == "length")
	if err != nil {
		return err
	}
	c.Set(ctxIndicators, len(out.Draft.Indicators))
	return c.JSON(http.StatusOK, ParseResponse{
		Draft: out.Draft, Warnings: nonNil(out.Warnings),
		Meta: ParseMeta{Stage: out.Stage, Truncated: out.Truncated},
	})
}

// validate handles POST /v1/validate: a confirmed draft in, normalised out, or invalid_draft.
func (s *Server) validate(c echo.Context) error {
	mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if mt != "application/json" {
		return problem.Errorf(problem.UnsupportedMediaType, "send the draft as application/json; got %q", mt)
	}
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return bodyErr(err, "the body cannot be read")
	}
	res, err := s.cfg.Builder.Validate(b)
	if err != nil {
		return err
	}
	res.Warnings = nonNil(res.Warnings)
	c.Set(ctxIndicators, len(res.Draft.Indicators))
	return c.JSON(http.StatusOK, res)
}

func nonNil(w []schema.Warning) []schema.Warning {
	if w == nil {
		return []schema.Warning{}
	}
	return w
}
