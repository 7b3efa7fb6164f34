// The one place that reads errors. The API answers a failed request with
// {"error": {"message", "field", "code"}} (field: the request key at fault, or null; code: bad_request,
// unknown_command, unknown_option, missing, invalid_value, conflict, invalid_model, invalid_hardware,
// not_finite, internal). The worker or comlink may instead throw (a module that failed to load); both come
// out of apiError() as the same object. Nothing reads the message's words: field and code say what failed.
// Pure: no DOM, importable from Node.

/** {message, field, code} for a reply document, a thrown value or a bare message; null when there is no error. */
export function apiError(value) {
  if (value == null) return null;
  if (value instanceof Error) return { message: value.message || String(value), field: null, code: 'internal' };
  if (typeof value === 'string') return { message: value, field: null, code: 'internal' };
  if (typeof value !== 'object') return { message: String(value), field: null, code: 'internal' };
  if (!('error' in value)) return 'message' in value && 'code' in value ? normalise(value) : null;
  const e = value.error;
  if (e == null) return null;
  if (typeof e === 'string') return { message: e, field: null, code: 'internal' };
  return normalise(e);
}

function normalise(e) {
  return {
    message: typeof e.message === 'string' && e.message ? e.message : 'the calculator failed',
    field: typeof e.field === 'string' && e.field ? e.field : null,
    code: typeof e.code === 'string' && e.code ? e.code : 'internal',
  };
}

/** Whether the error is "no accelerator to compute for". */
export const noHardware = (error) => error?.code === 'missing' && error.field === 'hardware';
