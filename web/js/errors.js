// The one place that reads errors. The API answers a failed request with
// {"error": {"message", "field", "code", "path", "attr"}} (field: the request key at fault, or null; code:
// bad_request, unknown_command, unknown_option, missing, invalid_value, conflict, invalid_model,
// invalid_hardware, not_finite, internal; path and attr: the layer, "layers[1][0]", and its attribute inside a
// layers JSON model, or null; a cluster question's refusal of its one accelerator adds `hardware`, the id refused).
// The worker or comlink may instead throw (a module that failed to load); both come out of apiError() as the same
// object. Nothing reads the message's words: field and code say what failed.
// Pure: no DOM, importable from Node.

/** {message, field, code, path, attr, hardware} for a reply document, a thrown value or a bare message; null when there is no error. */
export function apiError(value) {
  if (value == null) return null;
  if (value instanceof Error) return bare(value.message || String(value));
  if (typeof value === 'string') return bare(value);
  if (typeof value !== 'object') return bare(String(value));
  if (!('error' in value)) return 'message' in value && 'code' in value ? normalise(value) : null;
  const e = value.error;
  if (e == null) return null;
  if (typeof e === 'string') return bare(e);
  return normalise(e);
}

const bare = (message) => ({ message, field: null, code: 'internal', path: null, attr: null, hardware: null });
const text = (v) => (typeof v === 'string' && v ? v : null);

function normalise(e) {
  return {
    message: typeof e.message === 'string' && e.message ? e.message : 'the calculator failed',
    field: text(e.field),
    code: text(e.code) ?? 'internal',
    path: text(e.path),
    attr: text(e.attr),
    hardware: text(e.hardware),
  };
}

/** Whether the error is "no accelerator to compute for". */
export const noHardware = (error) => error?.code === 'missing' && error.field === 'hardware';
