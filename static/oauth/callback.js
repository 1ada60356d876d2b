// The page an authorization server sends the person back to after signing in to an MCP server.
// It is not the app: loading the app here would start a second runtime. It hands what came back
// (the code and the state, or the error) to the app's tabs on a BroadcastChannel, which works
// where window.opener does not (after the hop to another origin), and closes itself. The app
// checks the state; nothing here is trusted.
const query = new URLSearchParams(location.search);
const answer = {
  type: 'hearth-oauth-callback',
  state: query.get('state') ?? '',
  code: query.get('code') ?? undefined,
  error: query.get('error') ?? undefined,
  errorDescription: query.get('error_description') ?? undefined,
};
const channel = new BroadcastChannel('hearth-oauth');
channel.postMessage(answer);
channel.close();
// The code is not left in the address bar or the history.
history.replaceState(null, '', location.pathname);
document.getElementById('status').textContent = answer.code
  ? 'Signed in. You can close this window.'
  : 'Sign-in did not complete. You can close this window and try again in Hearth.';
setTimeout(() => window.close(), 300);
