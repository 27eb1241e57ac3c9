// The engine of the page that needs no server: the HTTP API's handler compiled to WebAssembly
// (src/wasm/engine.cpp), run off the page's thread. A message {id, request} is answered with
// {id, reply}: request and reply as the engine's ftplan_request() takes and gives them.
/* global createFtplanEngine, importScripts */
'use strict';

let ready;
try {
  importScripts('ftplan-engine.js');
  ready = createFtplanEngine();
} catch (error) {
  ready = Promise.reject(error);
}

function failure(message) {
  return {status: 503, content_type: 'application/json',
    body: JSON.stringify({error: {code: 'engine', message, field: '', suggestions: []}})};
}

onmessage = async ({data}) => {
  let reply;
  try {
    const module = await ready;
    reply = JSON.parse(module.ccall('ftplan_request', 'string', ['string'],
      [JSON.stringify(data.request)]));
  } catch (error) {
    reply = failure(`the page's engine could not run: ${error?.message ?? error}`);
  }
  postMessage({id: data.id, reply});
};
