// Pure: the layer types the editor offers, read from the layers-JSON schema (their attribute fields and how a
// field's text reads as a value), and what a new layer or a new document starts as.

const SKIP = new Set(['type', 'name', 'layers']);

// Values for required attributes of a newly added layer (anything missing here gets a generic default).
const STARTER = {
  linear: { out_features: 128 },
  conv1d: { out_channels: 64, kernel_size: 3 },
  conv2d: { out_channels: 64, kernel_size: 3, padding: 1 },
  conv3d: { out_channels: 64, kernel_size: 3 },
  conv_transpose2d: { out_channels: 64, kernel_size: 2, stride: 2 },
  maxpool2d: { kernel_size: 2 },
  avgpool2d: { kernel_size: 2 },
  groupnorm: { groups: 8 },
  reshape: { shape: [-1] },
  concat: { extra: 32 },
  squeeze_excitation: { squeeze_channels: 16 },
  embedding: { num_embeddings: 32000, embedding_dim: 512 },
  positional_embedding: { num_embeddings: 2048 },
  token_type_embedding: { num_embeddings: 2 },
  attention: { heads: 8, causal: true },
  mla_attention: { heads: 8, q_lora_rank: 384, kv_lora_rank: 128, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64 },
  relative_position_bias: { heads: 8 },
  mlp: { intermediate: 2048 },
  moe: { experts: 8, top_k: 2, intermediate: 1024 },
  rnn: { hidden: 256 },
  lstm: { hidden: 256 },
  gru: { hidden: 256 },
  matmul: { n: 64 },
  attention_core: { heads: 8 },
  memory_bound: { op: 'op', output_shape: [1, 128] },
  parameters: { count: 1000 },
  repeat: { count: 2, layers: [] },
  residual: { layers: [] },
};

export const BLANK_DOC = () => ({
  name: 'my-model',
  domain: 'language',
  input: { tokens: 512 },
  layers: [
    { type: 'embedding', name: 'embed', num_embeddings: 32000, embedding_dim: 512 },
    {
      type: 'repeat',
      name: 'blocks',
      count: 6,
      layers: [
        { type: 'residual', name: 'attn_block', layers: [{ type: 'layernorm', name: 'ln1' }, { type: 'attention', name: 'attn', heads: 8, causal: true }] },
        { type: 'residual', name: 'mlp_block', layers: [{ type: 'layernorm', name: 'ln2' }, { type: 'mlp', name: 'mlp', intermediate: 2048 }] },
      ],
    },
    { type: 'layernorm', name: 'final_norm' },
    { type: 'linear', name: 'lm_head', out_features: 32000, bias: false, tied: true },
    { type: 'cross_entropy', name: 'loss' },
  ],
});

/** Attribute descriptions per layer type from the layers-JSON schema. */
export function layerTypes(schema) {
  const types = {};
  const names = schema?.$defs?.layer?.properties?.type?.enum ?? [];
  for (const type of names) {
    const def = schema.$defs[type];
    if (!def) continue;
    const required = new Set(def.required ?? []);
    const fields = [];
    for (const [key, prop] of Object.entries(def.properties ?? {})) {
      if (SKIP.has(key)) continue;
      fields.push({ key, prop, required: required.has(key), kind: fieldKind(prop) });
    }
    types[type] = { description: def.description ?? '', fields };
  }
  return types;
}

function fieldKind(prop) {
  if (prop.enum) return 'enum';
  if (prop.type === 'boolean') return 'boolean';
  if (prop.type === 'integer') return 'integer';
  if (prop.type === 'number') return 'number';
  if (prop.type === 'array' || prop.oneOf) return 'list'; // an integer, a list of integers, or "same"
  return 'text';
}

/** A new layer of `type`: its starter values, and a generic value for each other required field. */
export function newLayer(types, type, name) {
  const layer = { type, name, ...structuredClone(STARTER[type] ?? {}) };
  for (const f of types[type]?.fields ?? []) if (f.required && layer[f.key] === undefined) layer[f.key] = genericValue(f);
  return layer;
}

function genericValue(f) {
  if (f.kind === 'enum') return f.prop.enum[0];
  if (f.kind === 'boolean') return false;
  if (f.kind === 'number') return 0.1;
  if (f.kind === 'text') return '';
  return 64;
}

/** A list field's value as its text box shows it. */
export function listText(value) {
  return Array.isArray(value) ? value.join(', ') : value == null ? '' : String(value);
}

/** A list field's text as a value: undefined when empty, "same", a number, a list, or {invalid: true}. */
export function parseList(text) {
  const t = text.trim();
  if (t === '') return undefined;
  if (t === 'same') return 'same';
  const parts = t.split(/[\s,x×]+/).filter(Boolean).map(Number);
  if (parts.some((x) => !Number.isInteger(x))) return { invalid: true };
  return parts.length === 1 ? parts[0] : parts;
}
