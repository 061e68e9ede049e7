// A scenario packed into a link (share.js's `scenario-data`): JSON, deflated
// when the browser can (CompressionStream), as URL-safe base64. The page
// fetches this module only for a link that carries a scenario or an imported
// file (sharebar.js); the trade-off explorer imports it directly.

function toBase64Url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
function fromBase64Url(text) {
  const b = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out;
}
async function pipe(bytes, stream) {
  const res = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await res.arrayBuffer());
}

/** A scenario object as a URL-safe string (deflated when the browser can). */
export async function packScenario(obj) {
  const bytes = new TextEncoder().encode(JSON.stringify(obj));
  if (typeof CompressionStream === 'function') return `z${toBase64Url(await pipe(bytes, new CompressionStream('deflate-raw')))}`;
  return `j${toBase64Url(bytes)}`;
}

/** The JSON text of a packed scenario; throws Error on damage. */
export async function unpackScenario(text) {
  try {
    const kind = text[0];
    const bytes = fromBase64Url(text.slice(1));
    if (kind === 'z') return new TextDecoder().decode(await pipe(bytes, new DecompressionStream('deflate-raw')));
    if (kind === 'j') return new TextDecoder().decode(bytes);
  } catch {
    // fall through
  }
  throw new Error('scenario-data: the scenario in the link is damaged (was the link cut short?)');
}
