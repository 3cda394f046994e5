package ocsf

// The OCSF event as this package writes it: one struct holding every
// attribute any emitted class uses, each omitted when empty, so that
// encoding/json writes it in one pass and a class only ever carries the
// attributes it sets. Which attributes a class may hold is the schema's
// business; the tests check every event against it.

// Event is one OCSF event.
type Event struct {
	ActivityID   int    `json:"activity_id"`
	ActivityName string `json:"activity_name,omitempty"`
	CategoryUID  int    `json:"category_uid"`
	CategoryName string `json:"category_name,omitempty"`
	ClassUID     int    `json:"class_uid"`
	ClassName    string `json:"class_name,omitempty"`
	TypeUID      int64  `json:"type_uid"`
	TypeName     string `json:"type_name,omitempty"`
	SeverityID   int    `json:"severity_id"`
	Severity     string `json:"severity,omitempty"`
	Time         int64  `json:"time"`
	Duration     int64  `json:"duration,omitempty"`
	Message      string `json:"message,omitempty"`

	StatusID     int    `json:"status_id,omitempty"`
	Status       string `json:"status,omitempty"`
	StatusDetail string `json:"status_detail,omitempty"`

	// Security control profile: what opx did about the activity.
	ActionID      int    `json:"action_id,omitempty"`
	Action        string `json:"action,omitempty"`
	DispositionID int    `json:"disposition_id,omitempty"`
	Disposition   string `json:"disposition,omitempty"`
	IsAlert       bool   `json:"is_alert,omitempty"`

	Metadata Metadata `json:"metadata"`
	Actor    *Actor   `json:"actor,omitempty"`
	Device   *Device  `json:"device,omitempty"`
	// AIAgent is the AI-operation profile's agent (not on findings,
	// whose class has no such profile: there it is in the evidence).
	AIAgent *AIAgent `json:"ai_agent,omitempty"`

	// API Activity.
	API         *API      `json:"api,omitempty"`
	SrcEndpoint *Endpoint `json:"src_endpoint,omitempty"`
	// Process Activity.
	Process  *Process `json:"process,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	// File System Activity.
	File       *File `json:"file,omitempty"`
	FileResult *File `json:"file_result,omitempty"`
	// Detection Finding.
	FindingInfo *FindingInfo `json:"finding_info,omitempty"`
	Evidences   []Evidence   `json:"evidences,omitempty"`
	// Authorize Session.
	User       *User    `json:"user,omitempty"`
	Session    *Session `json:"session,omitempty"`
	Privileges []string `json:"privileges,omitempty"`

	// Record integrity profile: the ledger's proof for this event.
	AttestationList []Attestation `json:"attestation_list,omitempty"`
	// Unmapped carries the opx facts OCSF has no attribute for.
	Unmapped *Unmapped `json:"unmapped,omitempty"`
}

// Metadata is OCSF's metadata object.
type Metadata struct {
	Version        string   `json:"version"`
	Product        Product  `json:"product"`
	UID            string   `json:"uid"`
	CorrelationUID string   `json:"correlation_uid,omitempty"`
	OriginalTime   string   `json:"original_time"`
	LogName        string   `json:"log_name"`
	Profiles       []string `json:"profiles"`
	Sequence       int64    `json:"sequence"`
	IsTruncated    bool     `json:"is_truncated,omitempty"`
}

// Product names the reporting product.
type Product struct {
	Name       string `json:"name"`
	VendorName string `json:"vendor_name"`
	Version    string `json:"version,omitempty"`
}

// Actor is who initiated the activity: the agent.
type Actor struct {
	AppName string   `json:"app_name,omitempty"`
	Session *Session `json:"session,omitempty"`
}

// Session names an opx session.
type Session struct {
	UID string `json:"uid"`
}

// Device is the engine's host.
type Device struct {
	Hostname string `json:"hostname,omitempty"`
	Name     string `json:"name,omitempty"`
	TypeID   int    `json:"type_id"`
	Type     string `json:"type,omitempty"`
}

// AIAgent is OCSF's ai_agent object.
type AIAgent struct {
	Name        string   `json:"name"`
	UID         string   `json:"uid"`
	InstanceUID string   `json:"instance_uid,omitempty"`
	TypeID      int      `json:"type_id"`
	Type        string   `json:"type,omitempty"`
	AIModel     *AIModel `json:"ai_model,omitempty"`
}

// AIModel is OCSF's ai_model object.
type AIModel struct {
	Name       string `json:"name"`
	AIProvider string `json:"ai_provider"`
}

// API is the tool or MCP operation called.
type API struct {
	Operation string    `json:"operation"`
	Service   *Service  `json:"service,omitempty"`
	Request   *Request  `json:"request,omitempty"`
	Response  *Response `json:"response,omitempty"`
}

// Service names who served an API call.
type Service struct {
	Name string `json:"name"`
}

// Request identifies a call.
type Request struct {
	UID string `json:"uid"`
}

// Response says how a call ended.
type Response struct {
	Code         *int   `json:"code,omitempty"`
	Error        string `json:"error,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
}

// Endpoint is a network endpoint: where a call came from.
type Endpoint struct {
	Name     string `json:"name,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// Process is a shell command the engine ran.
type Process struct {
	UID     string `json:"uid"`
	Name    string `json:"name,omitempty"`
	CmdLine string `json:"cmd_line,omitempty"`
}

// File is a file's state.
type File struct {
	Name   string        `json:"name"`
	Path   string        `json:"path,omitempty"`
	TypeID int           `json:"type_id"`
	Type   string        `json:"type,omitempty"`
	Size   int64         `json:"size,omitempty"`
	Hashes []Fingerprint `json:"hashes,omitempty"`
}

// Fingerprint is a hash and how it was computed.
type Fingerprint struct {
	AlgorithmID     int    `json:"algorithm_id"`
	Algorithm       string `json:"algorithm,omitempty"`
	EncodingID      int    `json:"encoding_id,omitempty"`
	SerializationID int    `json:"serialization_id,omitempty"`
	Value           string `json:"value"`
}

// FindingInfo describes a Shield finding.
type FindingInfo struct {
	UID      string    `json:"uid"`
	Title    string    `json:"title"`
	Analytic *Analytic `json:"analytic,omitempty"`
	Types    []string  `json:"types,omitempty"`
}

// Analytic is the Shield rule that decided.
type Analytic struct {
	Name   string `json:"name,omitempty"`
	UID    string `json:"uid,omitempty"`
	TypeID int    `json:"type_id"`
	Type   string `json:"type,omitempty"`
}

// Evidence is what a finding is about: the call and the agent.
type Evidence struct {
	Actor   *Actor   `json:"actor,omitempty"`
	AIAgent *AIAgent `json:"ai_agent,omitempty"`
	API     *API     `json:"api,omitempty"`
	Process *Process `json:"process,omitempty"`
}

// User is who answered an approval.
type User struct {
	Name   string `json:"name"`
	TypeID int    `json:"type_id"`
	Type   string `json:"type,omitempty"`
}

// Attestation is the record integrity profile's attestation: the ledger
// entry's hash, its chain link and the signed checkpoint covering it.
type Attestation struct {
	UID          string             `json:"uid"`
	ChainUID     string             `json:"chain_uid"`
	AuthorityUID string             `json:"authority_uid,omitempty"`
	Fingerprint  Fingerprint        `json:"fingerprint"`
	PrevEvent    *PrevEvent         `json:"prev_event,omitempty"`
	Signatures   []DigitalSignature `json:"signatures,omitempty"`
}

// PrevEvent links to the previous entry of the chain.
type PrevEvent struct {
	UID         string      `json:"uid"`
	Fingerprint Fingerprint `json:"fingerprint"`
}

// DigitalSignature is a signed checkpoint whose tree holds the entry.
type DigitalSignature struct {
	AlgorithmID     int          `json:"algorithm_id"`
	Algorithm       string       `json:"algorithm"`
	SerializationID int          `json:"serialization_id"`
	Serialization   string       `json:"serialization"`
	CreatedTime     int64        `json:"created_time,omitempty"`
	Digest          *Fingerprint `json:"digest,omitempty"`
}

// Unmapped holds opx's own facts, under "opx".
type Unmapped struct {
	OPX OPXFacts `json:"opx"`
}

// OPXFacts are the ledger coordinates of an event and what OCSF has no
// attribute for.
type OPXFacts struct {
	Seq        uint64          `json:"seq"`
	EntryType  string          `json:"entry_type"`
	Session    string          `json:"session,omitempty"`
	CallID     string          `json:"call_id,omitempty"`
	SubAgentID string          `json:"subagent_id,omitempty"`
	Tier       *int            `json:"tier,omitempty"`
	PolicyHash string          `json:"policy_hash,omitempty"`
	Withheld   bool            `json:"withheld,omitempty"`
	MoreFiles  int             `json:"more_files,omitempty"`
	Checkpoint *CheckpointFact `json:"checkpoint,omitempty"`
}

// CheckpointFact is the signed checkpoint covering an entry, whole, so a
// SIEM holds what `opx ledger verify-proof` and any C2SP verifier check.
type CheckpointFact struct {
	Seq      uint64 `json:"seq"`
	TreeSize uint64 `json:"tree_size"`
	Note     string `json:"note"`
}
