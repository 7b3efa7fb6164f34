// A stranger's JSON document (an uploaded file, a link's packed value) read within the API's own limits (the
// options reply's `limits`, from src/core/limits.hpp) before the page holds it. V8's JSON.parse takes any
// depth, but what the page does next with a document (JSON.stringify for the worker and the link,
// structuredClone, the layer editor) recurses, and a document nested 10^5 deep would overflow the main
// thread's stack; the API would refuse it anyway, so the page refuses it first, in the API's words.
// Pure: no DOM; tests/js/documents.test.mjs.

/** Nesting depth of JSON text (brackets inside strings do not count); stops counting past `limit`. */
export function jsonTextDepth(text, limit = Infinity) {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

const mib = (bytes) => `${Math.round(bytes / 2 ** 20)} MiB`;

/**
 * Parses `text` as JSON within `limits` ({json_depth, document_bytes}); `what` names the document in the
 * message. Returns {value} or {error: message}.
 */
export function readJson(text, limits, what) {
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > limits.document_bytes) return { error: `${what} is ${bytes} bytes, more than the limit of ${mib(limits.document_bytes)}` };
  if (jsonTextDepth(text, limits.json_depth) > limits.json_depth)
    return { error: `${what} is nested more than ${limits.json_depth} levels deep (the limit on JSON nesting)` };
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: `${what} is not valid JSON (${error.message})` };
  }
}

/** Bytes as UTF-8 text, or null when they are not UTF-8 (a document is text; replacing bad bytes would change it). */
export function utf8(bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Bytes (an ArrayBuffer or a typed array) as standard base64, as the API takes an ONNX file ({onnx_base64}). */
export function toBase64(bytes) {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  const CHUNK = 0x8000; // String.fromCharCode takes its arguments on the stack: a chunk at a time
  for (let i = 0; i < view.length; i += CHUNK) binary += String.fromCharCode.apply(null, view.subarray(i, i + CHUNK));
  return btoa(binary);
}

/** An ONNX file's bytes back from the model document the page holds ({onnx_base64}), for saving it. */
export function fromBase64(text) {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Whether a model document is an ONNX file as the API takes it. */
export const isOnnxDoc = (doc) => !!doc && typeof doc === 'object' && typeof doc.onnx_base64 === 'string';

/** Whether a model document is a diffusers config (diffusers writes _class_name into every config), as
 * importers/resolve.cpp tells it: for naming the upload. */
export const isDiffusersDoc = (doc) => typeof doc?._class_name === 'string';
