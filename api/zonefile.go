package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

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
	if mt != zoneFileType {
		p := newProblem(http.StatusUnsupportedMediaType, "send the zone file as "+zoneFileType)
		w.Header().Set("Accept-Post", zoneFileType)
		s.writeError(w, r, p)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxZoneFileBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.writeError(w, r, err)
			return
		}
		s.writeError(w, r, badRequest("reading the request body: "+err.Error()))
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
	records, diff, err := zonefile.Import(bytes.NewReader(body), z, mode, lbs)
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
