package ocsf

import "strings"

// class is an OCSF event class this package emits, with the captions of
// the activities it uses (the schema's, checked by the tests).
type class struct {
	uid, category int
	name          string
	activities    map[int]string
}

var categoryNames = map[int]string{1: "System Activity", 2: "Findings", 3: "Identity & Access Management", 6: "Application Activity"}

var (
	fileActivity = class{1001, 1, "File System Activity",
		map[int]string{1: "Create", 3: "Update", 4: "Delete", 6: "Set Attributes"}}
	processActivity  = class{1007, 1, "Process Activity", map[int]string{1: "Launch"}}
	detectionFinding = class{2004, 2, "Detection Finding", map[int]string{1: "Create"}}
	authorizeSession = class{3003, 3, "Authorize Session", map[int]string{1: "Assign Privileges"}}
	apiActivity      = class{6003, 6, "API Activity",
		map[int]string{1: "Create", 2: "Read", 3: "Update", 4: "Delete", 99: "Other"}}
)

// Dispositions and actions (security control profile).
const (
	dispAllowed  = 1
	dispBlocked  = 2
	dispApproved = 8
	dispDelayed  = 14
	dispAlert    = 19
	dispRejected = 25

	actAllowed = 1
	actDenied  = 2
	actOther   = 99
)

var dispositionNames = map[int]string{dispAllowed: "Allowed", dispBlocked: "Blocked", dispApproved: "Approved",
	dispDelayed: "Delayed", dispAlert: "Alert", dispRejected: "Rejected"}

var actionNames = map[int]string{actAllowed: "Allowed", actDenied: "Denied", actOther: "Other"}

var severityNames = map[int]string{1: "Informational", 2: "Low", 3: "Medium", 4: "High"}

func (ev *Event) dispose(disposition, action int) {
	ev.DispositionID, ev.Disposition = disposition, dispositionNames[disposition]
	ev.ActionID, ev.Action = action, actionNames[action]
}

func (ev *Event) severity(id int) { ev.SeverityID, ev.Severity = id, severityNames[id] }

func (ev *Event) status(ok bool) {
	if ok {
		ev.StatusID, ev.Status = 1, "Success"
	} else {
		ev.StatusID, ev.Status = 2, "Failure"
	}
}

// toolKind says how a tool's call is shown: a shell command is a
// process; everything else an API call, whose activity its name tells.
func toolKind(tool string) (process bool, activity int, service string) {
	if tool == "execute_command" {
		return true, 1, ""
	}
	service = "opx"
	name := tool
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		server, op, found := strings.Cut(rest, "__")
		if found {
			service, name = "mcp:"+server, op
		}
	}
	switch {
	case strings.HasPrefix(name, "read") || strings.HasPrefix(name, "list") || strings.HasPrefix(name, "search") ||
		strings.HasPrefix(name, "get") || strings.HasPrefix(name, "git_status") || strings.HasPrefix(name, "git_diff") ||
		strings.HasPrefix(name, "git_log") || name == "http_request":
		return false, 2, service
	case strings.HasPrefix(name, "write") || strings.HasPrefix(name, "edit") || strings.HasPrefix(name, "update") ||
		strings.HasPrefix(name, "move") || name == "rollback":
		return false, 3, service
	case strings.HasPrefix(name, "create"):
		return false, 1, service
	case strings.HasPrefix(name, "delete") || strings.HasPrefix(name, "remove"):
		return false, 4, service
	}
	return false, 99, service
}
