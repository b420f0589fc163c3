package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/glb-dns/glb/pools"
	"github.com/glb-dns/glb/transfer"
	"github.com/glb-dns/glb/zonefile"
)

// Zone files in and out (RFC 1035 §5): POST /zones/{id}/import reads a
// master file into the zone's records, GET /zones/{id}/export writes the
// zone as one.

// MaxZoneFileBytes bounds an imported file: a zone of a million short
// records.
const MaxZoneFileBytes = 64 << 20

// zoneFileType is the media type of a master file (RFC 4027).
const zoneFileType = "text/dns"

func (s *server) zoneFileRoutes(r chi.Router) {
	r.Post(Prefix+"/zones/{id}/import", s.importZone)
	r.Get(Prefix+"/zones/{id}/export", s.exportZone)
	r.Get(Prefix+"/zones/{id}/transfer", s.zoneTransfer)
}

// ImportResult answers an import: the diff, and whether it was stored.
type ImportResult struct {
	zonefile.Diff
	DryRun bool `json:"dry_run"`
	// Applied: the records were stored (false on a dry run and when the
	// file changes nothing).
	Applied bool `json:"applied"`
	// Serial is the zone's serial after the import.
	Serial uint32 `json:"serial"`
}

func (s *server) importZone(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	q := r.URL.Query()
	var fes []pools.FieldError
	mode := zonefile.Mode(q.Get("mode"))
	switch mode {
	case "":
		mode = zonefile.Merge
	case zonefile.Merge, zonefile.Replace:
	default:
		fes = append(fes, pools.FieldError{Path: "mode", Message: "must be merge or replace"})
	}
	dry := false
	switch q.Get("dry_run") {
	case "", "false":
	case "true":
		dry = true
	default:
		fes = append(fes, pools.FieldError{Path: "dry_run", Message: "must be true or false"})
	}
	ifRev, err := ifMatch(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(fes) > 0 {
		s.writeError(w, r, badRequest("bad query parameters", fes...))
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var pull *axfrImport
	var body []byte
	switch mt {
	case zoneFileType:
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxZoneFileBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				s.writeError(w, r, err)
				return
			}
			s.writeError(w, r, badRequest("reading the request body: "+err.Error()))
			return
		}
		body = b
	case "application/json":
		// A pull from the server being left: an outbound connection, so
		// it needs the integrations scope and the outbound policy.
		if err := needScope(r.Context(), pools.ScopeIntegrations); err != nil {
			p := err.(*Problem)
			p.Detail += ": an import by AXFR connects to the server named"
			s.writeError(w, r, p)
			return
		}
		doc, err := readJSON(w, r, false)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if pull, err = decodeAXFRImport(doc); err != nil {
			s.writeError(w, r, err)
			return
		}
	default:
		p := newProblem(http.StatusUnsupportedMediaType, "send the zone file as "+zoneFileType+", or {\"axfr\": {...}} as application/json")
		w.Header().Set("Accept-Post", zoneFileType+", application/json")
		s.writeError(w, r, p)
		return
	}
	o, err := s.Store.Get(r.Context(), pools.KindZone, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	z := o.(*pools.Zone)
	if ifRev > 0 && ifRev != z.Revision {
		s.writeError(w, r, pools.ErrStale)
		return
	}
	cfg, err := s.Store.Config(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	lbs := map[string]string{}
	for _, lb := range cfg.LoadBalancers {
		if lb.Zone == z.ID {
			lbs[pools.CanonicalName(lb.Name)] = lb.ID
		}
	}
	var (
		records []pools.Record
		diff    *zonefile.Diff
	)
	if pull != nil {
		dial := s.Outbound.DialContext(&net.Dialer{Timeout: 10 * time.Second, Resolver: s.Resolver})
		f, perr := zonefile.Pull(r.Context(), dial, pull.AXFR.Server, z.Name, pull.AXFR.TSIG)
		var pe *zonefile.PullError
		if errors.As(perr, &pe) {
			s.writeError(w, r, badRequest("the zone could not be transferred; nothing was stored",
				pools.FieldError{Path: "axfr." + pe.Field, Message: pe.Error()}))
			return
		}
		records, diff, err = zonefile.PlanRead(z, f, perr, mode, lbs)
	} else {
		records, diff, err = zonefile.Import(bytes.NewReader(body), z, mode, lbs)
	}
	if err != nil {
		s.writeError(w, r, fileProblem(err))
		return
	}
	res := ImportResult{Diff: *diff, DryRun: dry, Serial: z.Serial}
	if dry || diff.Empty() {
		writeJSON(w, http.StatusOK, item{Result: res})
		return
	}
	next := *z
	next.Records = records
	out, err := s.Store.Replace(r.Context(), &next, z.Revision)
	if err != nil {
		s.writeError(w, r, fileProblem(err))
		return
	}
	res.Applied = true
	res.Serial = out.(*pools.Zone).Serial
	w.Header().Set("ETag", etag(out))
	writeJSON(w, http.StatusOK, item{Result: res})
}

// axfrImport is the JSON body of an import by AXFR.
type axfrImport struct {
	AXFR struct {
		Server string         `json:"server"`
		TSIG   *zonefile.TSIG `json:"tsig"`
	} `json:"axfr"`
}

// decodeAXFRImport reads {"axfr": {"server", "tsig": {"name",
// "algorithm", "secret"}}}, naming each field at fault.
func decodeAXFRImport(doc map[string]any) (*axfrImport, error) {
	b, _ := json.Marshal(doc)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v axfrImport
	if err := dec.Decode(&v); err != nil {
		return nil, badRequest("the body must be {\"axfr\": {\"server\": \"host[:port]\", \"tsig\": {\"name\", \"algorithm\", \"secret\"}}}: " + err.Error())
	}
	var fes []pools.FieldError
	if strings.TrimSpace(v.AXFR.Server) == "" {
		fes = append(fes, pools.FieldError{Path: "axfr.server", Message: "required: the server to transfer the zone from, host or host:port"})
	}
	if k := v.AXFR.TSIG; k != nil {
		if k.Name == "" {
			fes = append(fes, pools.FieldError{Path: "axfr.tsig.name", Message: "required"})
		}
		if k.Algorithm == "" {
			k.Algorithm = pools.TSIGHMACSHA256
		}
		if _, err := base64.StdEncoding.DecodeString(k.Secret); err != nil || k.Secret == "" {
			fes = append(fes, pools.FieldError{Path: "axfr.tsig.secret", Message: "not base64"})
		}
	}
	if len(fes) > 0 {
		return nil, badRequest("bad AXFR import", fes...)
	}
	return &v, nil
}

// fileProblem words a zone file's validation errors: nothing was stored.
func fileProblem(err error) error {
	var ve *pools.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	p := problemFor(err)
	p.Detail = strings.Replace(p.Detail, "field(s)", "error(s)", 1)
	return p
}

func (s *server) exportZone(w http.ResponseWriter, r *http.Request) {
	o, err := s.Store.Get(r.Context(), pools.KindZone, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	z := o.(*pools.Zone)
	var lbs []zonefile.LB
	if s.hasLoadBalancers(r, z.ID) {
		snap, _, ok := s.served(w, r, "to write the load balancers' answers with")
		if !ok {
			return
		}
		lbs = zonefile.StaticLBs(snap, z.ID)
	}
	var buf bytes.Buffer
	if err := zonefile.Export(&buf, z, lbs); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", zoneFileType)
	w.Header().Set("ETag", etag(z))
	w.Header().Set("Content-Disposition", `attachment; filename="`+pools.CanonicalName(z.Name)+`.zone"`)
	_, _ = w.Write(buf.Bytes())
}

// hasLoadBalancers reports whether a load balancer lies in the zone; a
// store that does not answer counts as yes, so that the caller asks the
// snapshot rather than leaving them out.
func (s *server) hasLoadBalancers(r *http.Request, zoneID string) bool {
	refs, err := s.Store.Config(r.Context())
	if err != nil {
		return true
	}
	for _, lb := range refs.LoadBalancers {
		if lb.Zone == zoneID {
			return true
		}
	}
	return false
}

// TransferState tells what the node's secondaries last transferred
// (package transfer).
type TransferState interface {
	Serial(zoneID string) uint32
	Secondaries(zoneID string) []transfer.Secondary
}

// ZoneTransferStatus answers GET /zones/{id}/transfer.
type ZoneTransferStatus struct {
	Zone string `json:"zone"`
	// Transfer is the zone's settings; null when no secondary may
	// transfer it.
	Transfer *pools.ZoneTransfer `json:"transfer"`
	// Serial is the serial this node transfers now (0: none yet).
	Serial uint32 `json:"serial"`
	// Secondaries are those that transferred from this node since it
	// started, each with the serial it was last sent.
	Secondaries []transfer.Secondary `json:"secondaries"`
}

func (s *server) zoneTransfer(w http.ResponseWriter, r *http.Request) {
	o, err := s.Store.Get(r.Context(), pools.KindZone, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	z := o.(*pools.Zone)
	out := ZoneTransferStatus{Zone: z.ID, Transfer: z.Transfer, Secondaries: []transfer.Secondary{}}
	if s.Transfers != nil {
		out.Serial = s.Transfers.Serial(z.ID)
		out.Secondaries = s.Transfers.Secondaries(z.ID)
	}
	writeJSON(w, http.StatusOK, item{Result: out})
}
