// Service worker of the PreNeT web calculator (written into dist/ by web/build.mjs, which fills in the build
// id and the file list). It makes the calculator work offline: every file of the site is cached at install
// under a cache named after this build, older builds' caches are deleted on activation, and requests for
// the site's own files are answered from the cache first. It never fetches anything but the site's files.
const CACHE = 'prenet-__BUILD__';
const FILES = __FILES__;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('prenet-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(
    caches.open(CACHE).then(async (cache) => {
      // widget.html?model=... is the same file as widget.html: ignore the query when matching; the site's
      // folder URL (".../prenet/") is its index.html.
      const url = new URL(request.url);
      const hit =
        (await cache.match(request)) ??
        (await cache.match(request, { ignoreSearch: true })) ??
        (url.pathname.endsWith('/') ? await cache.match(new URL('index.html', url)) : undefined);
      if (hit) return hit;
      try {
        return await fetch(request);
      } catch (error) {
        if (request.mode === 'navigate') return (await cache.match('./index.html')) ?? Response.error();
        throw error;
      }
    }),
  );
});
