// @ts-check
// Images attached to the next message: pasted into the message box or dropped on the composer.
//
// `attachImages(form, input, list, onError)` wires paste and drag-and-drop and returns
// `take()`, which hands over (and clears) the images waiting for the next prompt, in the
// `session/prompt` `images` shape ({type: 'image', data, mimeType}), `restore(images)`,
// which puts taken images back in front (a message that could not be sent), and `add(files)`
// (files chosen with the composer's "Add image" button). The format is decided by
// the file's first bytes (PNG, JPEG, GIF, WebP), and files over MAX_IMAGE_BYTES are refused,
// like `agentctl send --image`; a refusal calls `onError(message)` and attaches nothing.

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** The image type of the first bytes of a file, or null. @param {Uint8Array} b */
export function sniffImage(b) {
  const starts = (/** @type {number[]} */ bytes, at = 0) => bytes.every((v, i) => b[at + i] === v);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts([0x47, 0x49, 0x46, 0x38]) && (b[4] === 0x37 || b[4] === 0x39) && b[5] === 0x61) return 'image/gif';
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return null;
}

/** @param {File} file @returns {Promise<{type: 'image', data: string, mimeType: string, name: string}>} */
export async function readImage(file) {
  const name = file.name || 'pasted image';
  if (file.size > MAX_IMAGE_BYTES) {
    throw new Error(`${name} is ${(file.size / 1048576).toFixed(1)} MB; images may be at most 5 MB`);
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  const mimeType = sniffImage(bytes);
  if (!mimeType) throw new Error(`${name} is not a PNG, JPEG, GIF or WebP image`);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { type: 'image', data: btoa(binary), mimeType, name };
}

/**
 * @param {HTMLElement} form @param {HTMLTextAreaElement} input @param {HTMLElement} list
 * @param {(message: string) => void} onError
 */
export function attachImages(form, input, list, onError) {
  /** @type {{type: 'image', data: string, mimeType: string, name: string}[]} */
  let pending = [];

  function render() {
    list.replaceChildren(
      ...pending.map((image, index) => {
        const item = document.createElement('li');
        item.className = 'attachment';
        const thumb = document.createElement('img');
        thumb.src = `data:${image.mimeType};base64,${image.data}`;
        thumb.alt = image.name;
        const remove = document.createElement('button');
        remove.type = 'button';
        remove.className = 'attachment-remove';
        remove.textContent = '×';
        remove.setAttribute('aria-label', `Remove ${image.name}`);
        remove.addEventListener('click', () => {
          pending = pending.filter((_, i) => i !== index);
          render();
        });
        item.append(thumb, remove);
        return item;
      }),
    );
    list.hidden = pending.length === 0;
  }

  /** Images are added in the order they were given: a paste and a drop close together are
   * read one after the other, never interleaved (each read would otherwise append to the list
   * as it was before the other's read finished, and one image would be lost). */
  let adding = Promise.resolve();
  function add(files) {
    adding = adding.then(() => addInOrder(files));
    return adding;
  }

  async function addInOrder(files) {
    for (const file of files) {
      try {
        const image = await readImage(file);
        pending = [...pending, image];
      } catch (error) {
        onError(String(/** @type {Error} */ (error).message ?? error));
      }
    }
    render();
  }

  input.addEventListener('paste', (event) => {
    const files = [...(event.clipboardData?.files ?? [])].filter((f) => f.type.startsWith('image/') || !f.type);
    if (files.length === 0) return;
    event.preventDefault();
    add(files);
  });
  form.addEventListener('dragover', (event) => {
    if (event.dataTransfer?.types.includes('Files')) {
      event.preventDefault();
      form.classList.add('dropping');
    }
  });
  form.addEventListener('dragleave', () => form.classList.remove('dropping'));
  form.addEventListener('drop', (event) => {
    form.classList.remove('dropping');
    const files = [...(event.dataTransfer?.files ?? [])];
    if (files.length === 0) return;
    event.preventDefault();
    add(files);
  });
  render();

  return {
    /** The images for the next prompt (cleared). */
    take() {
      const images = pending.map(({ type, data, mimeType }) => ({ type, data, mimeType }));
      pending = [];
      render();
      return images;
    },
    /** Put `images` (from `take()`) back in front of those attached since. */
    restore(images) {
      pending = [...images.map((image, i) => ({ ...image, name: `image ${i + 1}` })), ...pending];
      render();
    },
    /** Attach `files` (the "Add image" button's choice), in order. */
    add,
    get count() {
      return pending.length;
    },
  };
}
