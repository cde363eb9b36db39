package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/ocrdraft/ocrdraft/check"
	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/intake"
	"github.com/ocrdraft/ocrdraft/internal/budget"
	"github.com/ocrdraft/ocrdraft/internal/msg"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// extract handles POST /v1/extract: page images in, a merged draft out.
func (s *Server) extract(c echo.Context) error {
	if s.cfg.Extractor == nil {
		return s.notConfigured()
	}
	held, err := s.readTurn(c, s.cfg.MaxRequestBytes)
	if err != nil {
		return err
	}
	defer held.Close() // the uploads give their shares back as they go; this covers every other way out
	// The context alone does not stop a blocked read: the body's read deadlines (guardBody)
	// end one trickling in, or stalled, so it cannot keep its share of the upload memory.
	uploads, who, opts, err := s.images(c, held)
	if err != nil {
		return err
	}
	size := int64(0)
	for _, up := range uploads {
		size += int64(up.Len())
	}
	held.Give(held.Held() - size) // the body around the images is read and gone
	// Extract owns the uploads from here, and closes each (their shares moved to its pages).
	res, err := s.cfg.Extractor.ExtractWith(c.Request().Context(), uploads, who, opts)
	defer res.Close()
	// Nothing of the uploads is counted once Extract returns but the page images the answer
	// carries (include=pageImages), which stay counted until it is written (the deferred
	// Closes): what is left of the hold goes back now, not after the answer is written.
	if len(res.PageImages) == 0 {
		held.Close()
	}
	if res.Pages > 0 { // pages once split, not uploads: a PDF of three pages is three
		c.Set(ctxPages, res.Pages)
	}
	if err != nil {
		return err
	}
	c.Set(ctxMeta, &res.Meta)
	c.Set(ctxIndicators, len(res.Draft.Indicators))
	res.Warnings = s.localize(c, res.Warnings)
	return c.JSON(http.StatusOK, res)
}

// images reads the page images of a request, multipart or JSON, enforcing the page count and
// the per-image size while reading, and the caller's context (the patient's sex) for the checks.
// Each image comes as an owned budget.Bytes counted as its length in held, the upload memory it
// was read in: the caller hands them to the Extractor, keeping no other reference to the bytes.
func (s *Server) images(c echo.Context, held *budget.Hold) ([]*budget.Bytes, check.Context, extract.Options, error) {
	var opts extract.Options
	head, err := headerSex(c.Request().Header)
	if err != nil {
		return nil, check.Context{}, opts, err // before a byte of the upload is read
	}
	mt, params, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	var images [][]byte
	var who check.Context
	var include []string
	switch mt {
	case "multipart/form-data":
		images, who, include, err = s.multipartImages(c, params["boundary"])
	case "application/json":
		images, who, include, err = s.jsonImages(c)
	default:
		return nil, check.Context{}, opts, problem.Errorf(problem.UnsupportedMediaType,
			"send multipart/form-data with one image part per page, or application/json {\"images\": [{\"data\": \"<base64>\"}]}; got %q", mt)
	}
	if err != nil {
		return nil, who, opts, err
	}
	if opts, err = Include(include); err != nil {
		return nil, who, opts, err
	}
	switch {
	case head.Sex == "":
	case who.Sex == "":
		who = head
	case who.Sex != head.Sex:
		return nil, who, opts, problem.Errorf(problem.InvalidRequest, "the patient's sex is given twice, differently: in the %s header and in the body", PatientSexHeader)
	}
	uploads := make([]*budget.Bytes, len(images))
	for i, img := range images {
		uploads[i] = budget.NewBytes(img, held, int64(len(img)))
	}
	return uploads, who, opts, nil
}

// include is one value a request's include may hold, and what it adds to the answer.
type include struct {
	name string
	set  func(*extract.Options)
}

// includes is the one table of them, which Include reads.
var includes = []include{
	{"pageImages", func(o *extract.Options) { o.PageImages = true }},
}

// maxIncludeField bounds the multipart include field read: a few names.
const maxIncludeField = 256

// Include reads what a request asks its answer to include besides the draft: each value one name
// of the table includes, or several comma-separated (a multipart field may come more than once,
// a JSON member is a list). A name it does not know is 400 invalid_request, not ignored: a
// misspelt pageimages would otherwise be an answer without the images, silently; a caller that
// wants a name a newer service knows learns at once that this one does not. /v1/extract reads
// it, and so may any route that answers an extract.Response. A value is never echoed.
func Include(values []string) (extract.Options, error) {
	var opts extract.Options
	for _, v := range values {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			i := slices.IndexFunc(includes, func(in include) bool { return in.name == name })
			if i < 0 {
				names := make([]string, len(includes))
				for j, in := range includes {
					names[j] = in.name
				}
				return opts, problem.Errorf(problem.InvalidRequest, "include may hold %s, comma-separated; it holds another name", strings.Join(names, ", "))
			}
			includes[i].set(&opts)
		}
	}
	return opts, nil
}

// PatientSexHeader carries the patient's sex on /v1/extract. A header and not a multipart field:
// the Java client openapi-generator writes with its default options (java, native) sends every
// multipart field it knows of, and throws for a null one, while it sends a header only when
// given; and not a query parameter, because proxies log URLs. The server log never writes it
// (logRequests names its attributes one by one; no header is among them). The multipart field
// sex and the JSON context.sex of earlier clients are still read.
const PatientSexHeader = "Patient-Sex"

// maxSexField bounds the multipart sex field read: "female" and some spaces.
const maxSexField = 32

// headerSex reads the Patient-Sex header; absent or empty is no sex.
func headerSex(h http.Header) (check.Context, error) {
	vs := h.Values(PatientSexHeader)
	switch {
	case len(vs) == 0:
		return check.Context{}, nil
	case len(vs) > 1:
		return check.Context{}, problem.Errorf(problem.InvalidRequest, "send the %s header once", PatientSexHeader)
	}
	return checkContext(vs[0])
}

// RequestContext is what the caller knows about the patient. It is used only by the checks, to
// pick the printed reference range that applies; it never reaches the model or a log.
type RequestContext struct {
	Sex string `json:"sex,omitempty" desc:"The patient's sex, male or female: a printed range that differs for men and women then gives this sex's bounds (params.sex of the range_sex_specific warning says so); without it such bounds are null."`
}

// checkContext turns the caller's context into the checks'; the value is never echoed, so that
// it cannot reach a log through the problem's detail.
func checkContext(sex string) (check.Context, error) {
	sx, ok := check.ParseSex(sex)
	if !ok {
		return check.Context{}, problem.Errorf(problem.InvalidRequest, "sex must be male, female or empty")
	}
	return check.Context{Sex: sx}, nil
}

// uploadBuffer is the read buffer in front of a multipart body. mime/multipart reads through a
// 4 KB buffer of its own, which alone would make every 4 KB of an upload one read system call
// (256 for a 1 MB photo; with this, a few dozen).
const uploadBuffer = 64 << 10

// maxSizeHint caps the buffer an image is first read into (intake.ReadAllSized): a phone's photo
// fits, and a larger one grows by doubling from there.
const maxSizeHint = 2 << 20

func (s *Server) multipartImages(c echo.Context, boundary string) (_ [][]byte, _ check.Context, include []string, _ error) {
	var who check.Context
	if boundary == "" {
		return nil, who, nil, problem.Errorf(problem.InvalidRequest, "the multipart body cannot be read: Content-Type has no boundary")
	}
	mr := multipart.NewReader(bufio.NewReaderSize(c.Request().Body, uploadBuffer), boundary)
	var images [][]byte
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, who, nil, bodyErr(err, "the multipart body is malformed")
		}
		switch part.FormName() {
		case "image":
		case "include":
			b, err := io.ReadAll(io.LimitReader(part, maxIncludeField+1))
			if err != nil {
				return nil, who, nil, bodyErr(err, "the include part cannot be read")
			}
			if len(b) > maxIncludeField {
				return nil, who, nil, problem.Errorf(problem.InvalidRequest, "include is longer than %d bytes", maxIncludeField)
			}
			include = append(include, string(b))
			continue
		case "callbackUrl": // POST /v1/jobs's
			b, err := io.ReadAll(io.LimitReader(part, maxCallbackURL+1))
			if err != nil {
				return nil, who, nil, bodyErr(err, "the callbackUrl part cannot be read")
			}
			if len(b) > maxCallbackURL {
				return nil, who, nil, problem.Errorf(problem.InvalidRequest, "callbackUrl is longer than %d bytes", maxCallbackURL)
			}
			c.Set(ctxCallback, string(b))
			continue
		case "sex":
			b, err := io.ReadAll(io.LimitReader(part, maxSexField+1))
			if err != nil {
				return nil, who, nil, bodyErr(err, "the sex part cannot be read")
			}
			if len(b) > maxSexField {
				return nil, who, nil, problem.Errorf(problem.InvalidRequest, "sex must be male, female or empty")
			}
			if who, err = checkContext(string(b)); err != nil {
				return nil, who, nil, err
			}
			continue
		default:
			_, _ = io.Copy(io.Discard, part) // other fields are ignored
			continue
		}
		if len(images) == s.cfg.MaxPages {
			return nil, who, nil, extract.TooManyPages(s.cfg.MaxPages)
		}
		// The body's size bounds the part's; with one image it is a close fit. The buffer is
		// made before the bytes come, so its size is capped: a body declaring more than it
		// sends must not make a buffer of what it declares (the upload memory charges only
		// what has arrived).
		data, err := intake.ReadAllSized(part, s.cfg.MaxImageBytes, min(c.Request().ContentLength, maxSizeHint))
		if err != nil {
			return nil, who, nil, bodyErr(err, "the image part cannot be read")
		}
		images = append(images, data)
	}
	if len(images) == 0 {
		return nil, who, nil, problem.Errorf(problem.InvalidRequest, "no part named \"image\": send one image part per page")
	}
	return images, who, include, nil
}

// ExtractRequest is the JSON form of /v1/extract.
type ExtractRequest struct {
	Images  []PageImage     `json:"images" desc:"One image per page, in order."`
	Context *RequestContext `json:"context,omitempty" desc:"What the caller knows about the patient, for the checks only; never sent to the model."`
	Include []string        `json:"include,omitempty" desc:"What the answer should carry besides the draft: pageImages, each page's image as sent to the model (pageImages in the answer). Absent, nothing more; an unknown name is invalid_request."`
}

// PageImage is one page of an ExtractRequest.
type PageImage struct {
	Data string `json:"data" format:"byte" desc:"The image as base64 (a data: URL is accepted too). Its type is sniffed from its bytes."`
}

func (s *Server) jsonImages(c echo.Context) ([][]byte, check.Context, []string, error) {
	var req JobRequest // ExtractRequest's members, and POST /v1/jobs's callbackUrl
	var who check.Context
	if err := json.NewDecoder(c.Request().Body).Decode(&req); err != nil {
		return nil, who, nil, bodyErr(err, "the JSON body is malformed")
	}
	if req.CallbackURL != "" {
		c.Set(ctxCallback, req.CallbackURL)
	}
	if req.Context != nil {
		var err error
		if who, err = checkContext(req.Context.Sex); err != nil {
			return nil, who, nil, err
		}
	}
	if len(req.Images) == 0 {
		return nil, who, nil, problem.Errorf(problem.InvalidRequest, "images is empty: send one {\"data\": \"<base64>\"} per page")
	}
	if len(req.Images) > s.cfg.MaxPages {
		return nil, who, nil, extract.TooManyPages(s.cfg.MaxPages)
	}
	images := make([][]byte, len(req.Images))
	for i, im := range req.Images {
		b, err := decodeImage(im.Data, s.cfg.MaxImageBytes)
		if err != nil {
			err.Detail = fmt.Sprintf("images[%d].data %s", i, err.Detail)
			return nil, who, nil, err
		}
		images[i] = b
		req.Images[i].Data = "" // let the base64 text go
	}
	return images, who, req.Include, nil
}

// bodyErr keeps a size error's code (the body limit or the image limit) and calls anything else
// a malformed request.
func bodyErr(err error, what string) error {
	if pe, ok := bodyTimeout(err); ok {
		return pe
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return problem.Ended(err, "while the body was read") // a wait for upload memory cut short
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
		return problem.Errorf(problem.PayloadTooLarge, "the request body is larger than the limit")
	}
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &problem.Error{Code: problem.RequestTimeout, Detail: "the request body did not arrive within its deadline", Err: err}
	}
	return &problem.Error{Code: problem.InvalidRequest, Detail: what, Err: err}
}

// ParseRequest is the JSON form of /v1/parse.
type ParseRequest struct {
	Reply        string          `json:"reply" desc:"The model's reply, verbatim."`
	FinishReason string          `json:"finishReason,omitempty" desc:"The model's finish reason; length means the reply was cut at the token limit."`
	Context      *RequestContext `json:"context,omitempty" desc:"What the caller knows about the patient, for the checks only."`
}

// ParseMeta tells how a replayed reply was read.
type ParseMeta struct {
	Stage     schema.ParseStage `json:"stage"`
	Found     string            `json:"found,omitempty" desc:"Where in the reply's JSON the draft was found (choices[0].message.content, [0].arguments); absent when the reply itself was the draft."`
	Truncated bool              `json:"truncated" desc:"The model cut its reply off (finishReason length, or JSON left open)."`
	TooLong   bool              `json:"tooLong" desc:"The reply was longer than the service reads (256 KiB); only its start was read."`
}

// ParseResponse is the answer of /v1/parse.
type ParseResponse struct {
	Draft    schema.OcrDraft  `json:"draft"`
	Warnings []schema.Warning `json:"warnings"`
	Meta     ParseMeta        `json:"meta"`
}

// parse handles POST /v1/parse: a captured model reply in, the draft out, checked as
// /v1/extract's is, no model call. A reply it cannot read is the caller's text, so
// reply_unparseable (422), not the 502 of a model's reply.
func (s *Server) parse(c echo.Context) error {
	mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if mt != "application/json" && mt != "text/plain" && mt != "" {
		return problem.Errorf(problem.UnsupportedMediaType, "send text/plain (the reply) or application/json {\"reply\": \"...\"}; got %q", mt)
	}
	b, done, err := s.textBody(c)
	if err != nil {
		return err
	}
	defer done()
	var req ParseRequest
	if mt != "application/json" {
		req.Reply = string(b)
	} else {
		if err := json.Unmarshal(b, &req); err != nil {
			return bodyErr(err, "the JSON body is malformed: want {\"reply\": \"...\", \"finishReason\": \"stop\"}")
		}
	}
	b = nil
	var who check.Context
	if req.Context != nil {
		if who, err = checkContext(req.Context.Sex); err != nil {
			return err
		}
	}
	// The read checks the context between pieces: the route's deadline bounds it too.
	out, err := s.cfg.Builder.FromReplyContext(c.Request().Context(), req.Reply, req.FinishReason == "length")
	if err != nil {
		var pe *problem.Error
		if errors.As(err, &pe) && pe.Code == problem.ModelOutputUnparseable {
			return &problem.Error{Code: problem.ReplyUnparseable, Detail: pe.Detail, Excerpt: pe.Excerpt, Err: err}
		}
		return err
	}
	// The checks stop at the route's deadline too; a draft checked in part is not answered.
	ws, err := check.RunContext(c.Request().Context(), s.cfg.Builder.Lexicon(), &out.Draft, who)
	if err != nil {
		return err
	}
	out.Warnings = append(out.Warnings, ws...)
	c.Set(ctxIndicators, len(out.Draft.Indicators))
	return c.JSON(http.StatusOK, ParseResponse{
		Draft: out.Draft, Warnings: nonNil(s.localize(c, out.Warnings)),
		Meta: ParseMeta{Stage: out.Stage, Found: out.Found, Truncated: out.Truncated, TooLong: out.TooLong},
	})
}

// validate handles POST /v1/validate: a confirmed draft in, normalised out with the same review
// warnings as a fresh draft (checked as confirmed: nothing in it is changed), or invalid_draft.
func (s *Server) validate(c echo.Context) error {
	mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if mt != "application/json" {
		return problem.Errorf(problem.UnsupportedMediaType, "send the draft as application/json; got %q", mt)
	}
	b, done, err := s.textBody(c)
	if err != nil {
		return err
	}
	defer done()
	res, err := s.cfg.Builder.Validate(b)
	if err != nil {
		return err
	}
	ws, err := check.RunContext(c.Request().Context(), s.cfg.Builder.Lexicon(), &res.Draft, check.Context{Confirmed: true})
	if err != nil {
		return err
	}
	res.Warnings = nonNil(append(res.Warnings, ws...))
	res.Warnings = s.localize(c, res.Warnings)
	c.Set(ctxIndicators, len(res.Draft.Indicators))
	return c.JSON(http.StatusOK, res)
}

// textBody reads the body of /v1/parse or /v1/validate within the upload memory, as
// /v1/extract's is, and then takes a text turn for the work on it: the turn is held only while
// the CPU works, never while a body trickles in. done gives both back.
func (s *Server) textBody(c echo.Context) (b []byte, done func(), err error) {
	held, err := s.readTurn(c, maxTextBody)
	if err != nil {
		return nil, nil, err
	}
	b, err = io.ReadAll(c.Request().Body)
	if err != nil {
		held.Close()
		return nil, nil, bodyErr(err, "the body cannot be read")
	}
	if err := s.texts.Enter(c.Request().Context(), s.cfg.Metrics.TextQueued); err != nil {
		held.Close()
		return nil, nil, err
	}
	return b, func() { s.texts.Leave(); held.Close() }, nil
}

// localize writes the warnings' messages in the language the caller's Accept-Language asks
// for (zh*, en*), else the configured one; the answer varies with that header.
func (s *Server) localize(c echo.Context, ws []schema.Warning) []schema.Warning {
	c.Response().Header().Add(echo.HeaderVary, "Accept-Language")
	return msg.Localize(ws, msg.FromAcceptLanguage(c.Request().Header.Get("Accept-Language"), s.cfg.Lang))
}

func nonNil(w []schema.Warning) []schema.Warning {
	if w == nil {
		return []schema.Warning{}
	}
	return w
}
