/**
 * HTTP/1.1 by hand over a socket, for what fetch will not send: broken framing, a body shorter
 * than its Content-Length, a header repeated on its own line.
 */
import { connect } from 'node:net';

/** Send raw bytes and read the answer until the server closes or `until` matches. */
export function raw(port: number, bytes: string, until: RegExp = /\r\n\r\n[\s\S]*\}/): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (until.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('end', () => resolve(text));
    socket.on('error', (err) => (text ? resolve(text) : reject(err)));
    socket.write(bytes);
  });
}

/** The JSON body of a raw answer. */
export function bodyOf(response: string): any {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}
