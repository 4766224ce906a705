package store

import "errors"

// The CheckFields methods name an input's bad fields without writing
// anything. The handlers call them when a body could not be decoded
// whole (a member of the wrong JSON type), so that one answer names the
// wrongly typed members and every other bad field together. The write
// paths run the same checks themselves.

// CheckFields names the bad fields of a content block body.
func (in *ContentInput) CheckFields(create bool) FieldErrors {
	_, err := in.validate(create)
	return fieldsIn(err)
}

// CheckFields names the bad fields of an event body.
func (in *EventInput) CheckFields(bool) FieldErrors { return fieldsIn(in.Validate()) }

// CheckFields names the bad fields of an audience body.
func (in *AudienceInput) CheckFields(create bool) FieldErrors {
	_, err := in.validate(create)
	return fieldsIn(err)
}

// CheckFields names the bad fields of a campaign body, reading dates
// without offset in the body's timezone (UTC when it has none).
func (in *CampaignInput) CheckFields(create bool) FieldErrors {
	fe := FieldErrors{}
	tz := "UTC"
	if in.Timezone != nil {
		tz = *in.Timezone
	}
	in.validate(create, tz, fe)
	return fe
}

// CheckFields names the bad fields of a webhook body.
func (in *WebhookInput) CheckFields(create bool) FieldErrors {
	_, err := in.validate(create)
	return fieldsIn(err)
}

// CheckFields names the bad fields of a form submission body (its data is
// checked against the form only once the block is known).
func (in *FormSubmissionInput) CheckFields(bool) FieldErrors {
	_, fe := in.validate()
	return fe
}

// fieldsIn returns the field errors an EINVALID error carries.
func fieldsIn(err error) FieldErrors {
	fe := FieldErrors{}
	var e *Error
	if errors.As(err, &e) {
		if m, ok := e.Details["fields"].(map[string]any); ok {
			for k, v := range m {
				if s, ok := v.(string); ok {
					fe.Add(k, s)
				}
			}
		}
	}
	return fe
}
