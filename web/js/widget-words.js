// The widget's words (web/js/widget.js): its query's problems, an API error said without the command line,
// the budget its time and cost assume. Pure: Node's tests import it.
import * as F from './format.js';
import { budgetOf } from './results/rows.js';
import * as S from './state.js';

const MODEL = /^[\w.+:/-]{1,128}$/;

/**
 * The query's problems, each in words ("batch=-3: Batch size must be at least 1"): a value its row refuses,
 * an attribute the widget does not know, a malformed model or accelerator list. Pure.
 */
export function queryProblems(query, table, origin = globalThis.location?.origin ?? null) {
  const problems = [];
  const byUrl = new Map(table.fields.filter((r) => r.url).map((r) => [r.url, r]));
  for (const [key, value] of query) {
    if (key === 'model') {
      if (!MODEL.test(value)) problems.push(`model=${value}: not a model id (letters, digits and . _ - + / : only)`);
    } else if (key === 'hardware') {
      if (value !== 'all' && value.split(',').some((id) => !S.validId(id))) problems.push(`hardware=${value}: a comma-separated list of accelerator ids, or all`);
    } else if (key === 'calibration') {
      const problem = calibrationUrlProblem(value, origin);
      if (problem) problems.push(`calibration=${value}: ${problem}`);
    } else if (key === 'budget') {
      if (!['tokens', 'samples', ''].includes(value)) problems.push(`budget=${value}: tokens or samples`);
    } else if (byUrl.has(key)) {
      const row = byUrl.get(key);
      const { error } = S.parseValue(row, value);
      if (error) problems.push(`${key}=${value}: ${row.label} must be ${error}`);
    } else problems.push(`${key}: not an attribute the widget knows`);
  }
  return problems;
}

/**
 * Why a `calibration` attribute is not a URL the widget fetches (null when it is): a calibration JSON on the
 * widget's own origin (relative to widget.html, or absolute with the same origin). Pure.
 */
export function calibrationUrlProblem(value, origin) {
  let url;
  try {
    url = new URL(value, origin ? `${origin}/` : undefined);
  } catch {
    return 'not a URL';
  }
  if (!/^https?:$/.test(url.protocol) || url.origin !== origin) return `not on this site (${origin ?? 'no origin'}): the widget fetches a calibration from its own site only`;
  return null;
}

/** An API error in the widget's words: what in the attributes is wrong, never a command to run. */
export function widgetMessage(error, query) {
  if (error.field === 'model') {
    const m = query.get('model') ?? 'gpt2';
    return error.code === 'invalid_model' || /unknown model/i.test(error.message)
      ? `Unknown model “${m}”: the widget takes a model id from the calculator's zoo, such as gpt2 or llama2-7b.`
      : `The model “${m}” cannot be computed: ${plain(error.message)}`;
  }
  if (error.field === 'hardware' || error.field === 'custom_hardware')
    return /unknown hardware/i.test(error.message)
      ? `Unknown accelerator in hardware=${query.get('hardware') ?? ''}: use ids from the calculator's accelerator list, such as h100-sxm5-80gb.`
      : `These accelerators cannot answer this: ${plain(error.message)}`;
  return `The widget could not compute this: ${plain(error.message)}`;
}

// A message without the command-line advice some API messages carry ("`prenet zoo` lists them", "--batch").
export function plain(message) {
  return String(message)
    .split(/;\s*/)
    .filter((part) => !/`[^`]*`/.test(part))
    .join('; ')
    .replace(/--([a-z][a-z-]*)/g, (_, flag) => flag.replace(/-/g, ' '))
    .replace(/\s*\(known: [^)]*\)/, '');
}

/** "1B tokens" / "1.28M samples × 1 epoch": the budget the time and cost assume. */
export function budgetWords(reply) {
  const b = budgetOf(reply);
  if (b?.tokens != null) return `${F.count(b.tokens)} tokens`;
  if (b?.samples != null) return `${F.count(b.samples)} samples × ${F.num(b.epochs)} epoch${b.epochs === 1 ? '' : 's'}`;
  return null;
}
