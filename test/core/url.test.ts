import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import {
  checkBaseUrl,
  isInsecureHttp,
  isLoopbackHost,
  normalizeBaseUrl,
  parseHttpUrl,
  serviceKey,
  withoutTrailingSlashes,
} from '../../src/core/url.js';

describe('isLoopbackHost and isInsecureHttp', () => {
  it('know the loopback names and addresses', () => {
    for (const host of ['localhost', 'api.localhost', '127.0.0.1', '127.1.2.3', '[::1]', 'LOCALHOST'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['example.com', '10.0.0.1', '128.0.0.1', 'localhost.example.com'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('call plain http to another machine insecure, not https nor loopback', () => {
    expect(isInsecureHttp(new URL('http://orders.example.com'))).toBe(true);
    expect(isInsecureHttp(new URL('https://orders.example.com'))).toBe(false);
    expect(isInsecureHttp(new URL('http://127.0.0.1:4780'))).toBe(false);
  });
});

describe('checkBaseUrl', () => {
  it('accepts https, and http on loopback or when allowed', () => {
    expect(checkBaseUrl('https://orders.example.com', false).host).toBe('orders.example.com');
    expect(checkBaseUrl('http://127.0.0.1:4780', false).port).toBe('4780');
    expect(checkBaseUrl('http://orders.example.com', true).protocol).toBe('http:');
  });

  it('refuses what is not an http(s) URL, credentials in it, and plain http elsewhere', () => {
    expect(() => checkBaseUrl('orders.example.com', false)).toThrow(/is not a URL/);
    expect(() => checkBaseUrl('ftp://orders.example.com', false)).toThrow(/must start with https:\/\//);
    expect(() => checkBaseUrl('https://u:p@orders.example.com', false)).toThrow(
      /must not contain credentials/,
    );
    expect(() => checkBaseUrl('http://orders.example.com', false)).toThrow(UsageError);
  });
});

describe('parseHttpUrl', () => {
  it('names the flag and shows the example', () => {
    expect(parseHttpUrl('http://127.0.0.1:3000/hooks', '--forward-to', 'x').pathname).toBe('/hooks');
    expect(() => parseHttpUrl('nope', '--url', 'http://127.0.0.1:8787/')).toThrow(
      '--url must be a URL such as http://127.0.0.1:8787/, not "nope".',
    );
    expect(() => parseHttpUrl('ws://127.0.0.1/', '--url', 'x')).toThrow(
      '--url must be an http:// or https:// URL, not ws://.',
    );
  });
});

describe('base URLs that name one service', () => {
  it('normalizeBaseUrl ignores the case of the host and trailing slashes', () => {
    expect(normalizeBaseUrl('HTTP://Orders.Example.com:443/api//')).toBe('http://orders.example.com:443/api');
    expect(normalizeBaseUrl('https://orders.example.com/')).toBe('https://orders.example.com');
    expect(normalizeBaseUrl('not a url/')).toBe('not a url');
  });

  it('serviceKey spells out the default port and drops trailing slashes', () => {
    expect(serviceKey('https://orders.example.com/')).toEqual({
      host: 'orders.example.com',
      rest: 'https:443',
    });
    expect(serviceKey('http://[::1]:4780/v/')).toEqual({ host: '::1', rest: 'http:4780/v' });
    expect(serviceKey('nope')).toBeUndefined();
  });

  it('withoutTrailingSlashes', () => {
    expect(withoutTrailingSlashes('/hooks//')).toBe('/hooks');
    expect(withoutTrailingSlashes('/')).toBe('');
  });
});
