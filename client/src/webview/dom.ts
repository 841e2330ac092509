/** DOM construction helpers: elements with attributes and children, codicons, icon buttons. */

export function element(tag: string, attributes: Record<string, string> = {}, children: Array<Node | string> = []): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

export function icon(name: string, ...modifiers: string[]): HTMLElement {
  return element('span', { class: ['codicon', `codicon-${name}`, ...modifiers].join(' '), 'aria-hidden': 'true' });
}

export function iconButton(iconName: string, label: string, attributes: Record<string, string>): HTMLElement {
  return element('button', { type: 'button', class: 'icon-button', 'aria-label': label, title: label, ...attributes }, [icon(iconName)]);
}
