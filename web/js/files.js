// Files in and out of the page, as every panel takes and gives them: a file input plus a drop zone that hand the
// first file to a reader, and a download of text the page made. DOM only; what a file holds is each panel's.

/** Saves `text` as a file named `name` (of MIME type `type`) through a temporary link. */
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 2000);
}

/** Hands the file chosen in `input`, or dropped on `drop` (marked `over` while a file hovers), to `read`. */
export function acceptFiles(input, drop, read) {
  input.addEventListener('change', (e) => {
    read(e.target.files[0]);
    e.target.value = '';
  });
  for (const type of ['dragenter', 'dragover'])
    drop.addEventListener(type, (e) => {
      e.preventDefault();
      drop.classList.add('over');
    });
  for (const type of ['dragleave', 'drop']) drop.addEventListener(type, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    read(e.dataTransfer.files[0]);
  });
}
