/** Which files are vault pages, and how a server error is classified. Pure. */

/** True for a top-level Markdown page: `<...>/EchoesVault/pages/<name>.md`. */
export function isVaultPage(fsPath: string): boolean {
  return /(^|[\\/])EchoesVault[\\/]pages[\\/][^\\/]+\.md$/i.test(fsPath) && !/[\\/]\.[^\\/]*$/.test(fsPath);
}

/** True when a server error says the page changed on disk since it was opened. */
export function isStaleError(message: string): boolean {
  return /\bEV701\b/.test(message);
}

/**
 * A file's text as VS Code shows it: without a leading UTF-8 byte-order mark. Node's `utf8`
 * decoding keeps the mark as U+FEFF; put into a buffer, it becomes a visible character, and a
 * save with VS Code's own `utf8bom` encoding writes the mark twice.
 */
export function withoutByteOrderMark(text: string): string {
  return text.startsWith('\ufeff') ? text.slice(1) : text;
}

/** The page's file name, for messages. */
export function baseName(fsPath: string): string {
  const parts = fsPath.split(/[\\/]/);
  return parts[parts.length - 1] ?? fsPath;
}

/** Text of a server error, without the JSON-RPC wrapping. */
export function errorText(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  if (error !== null && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  return String(error);
}

export interface SearchHit {
  file: string;
  line: number;
  text: string;
}

/** Validates a search result from the server. */
export function searchHits(result: unknown): { hits: SearchHit[]; truncated: boolean } {
  const hits: SearchHit[] = [];
  if (result === null || typeof result !== 'object') {
    return { hits, truncated: false };
  }
  const r = result as Record<string, unknown>;
  if (Array.isArray(r.results)) {
    for (const item of r.results) {
      if (item !== null && typeof item === 'object') {
        const h = item as Record<string, unknown>;
        if (typeof h.file === 'string' && typeof h.line === 'number') {
          hits.push({ file: h.file, line: Math.max(1, Math.floor(h.line)), text: typeof h.text === 'string' ? h.text : '' });
        }
      }
    }
  }
  return { hits, truncated: r.truncated === true };
}
