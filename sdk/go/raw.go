package klaxon

import "encoding/json"

// Answers keep the gateway's exact JSON in Raw, as the Python SDK keeps it in
// raw: fields a newer gateway adds are never lost, and a program (such as the
// klaxon CLI with --json) can print what the gateway said, byte for byte.

// keepRaw decodes data into plain, a pointer to a method-less copy of the type
// (so decoding does not call UnmarshalJSON again), and keeps data in raw.
func keepRaw(data []byte, plain any, raw *json.RawMessage) error {
	if err := json.Unmarshal(data, plain); err != nil {
		return err
	}
	*raw = append(json.RawMessage(nil), data...)
	return nil
}

// UnmarshalJSON decodes a notification and keeps its JSON in Raw.
func (n *Notification) UnmarshalJSON(data []byte) error {
	type plain Notification
	return keepRaw(data, (*plain)(n), &n.Raw)
}

// UnmarshalJSON decodes a receipt and keeps its JSON in Raw.
func (r *Receipt) UnmarshalJSON(data []byte) error {
	type plain Receipt
	return keepRaw(data, (*plain)(r), &r.Raw)
}

// UnmarshalJSON decodes a ping's answer and keeps its JSON in Raw.
func (a *PingAnswer) UnmarshalJSON(data []byte) error {
	type plain PingAnswer
	return keepRaw(data, (*plain)(a), &a.Raw)
}

// UnmarshalJSON decodes an event's result and keeps its JSON in Raw.
func (r *EventResult) UnmarshalJSON(data []byte) error {
	type plain EventResult
	return keepRaw(data, (*plain)(r), &r.Raw)
}

// UnmarshalJSON decodes a problem document and keeps its JSON in Raw.
func (e *Error) UnmarshalJSON(data []byte) error {
	type plain Error
	return keepRaw(data, (*plain)(e), &e.Raw)
}
